#include "src/model/exact_sum.h"

#include <cmath>
#include <utility>

namespace ptprof {

void ExactSum::AddSplitting(double value) {
  // Each partial in turn takes the value: their sum rounded stays as the value carried on, the
  // rounding error (exact, by the two-sum of the larger and the smaller) stays as a partial.
  size_t kept = 0;
  for (size_t i = 0; i < partials_.size(); ++i) {
    double y = partials_[i];
    if (std::fabs(value) < std::fabs(y)) std::swap(value, y);
    const double high = value + y;
    const double low = y - (high - value);
    if (low != 0) partials_[kept++] = low;
    value = high;
  }
  partials_.resize(kept);
  partials_.push_back(value);
}

void ExactSum::Merge(const ExactSum& other) {
  for (double partial : other.partials_) Add(partial);
}

double ExactSum::Value() const {
  if (partials_.empty()) return 0;
  // From the largest down, until a partial no longer fits in the sum without rounding.
  size_t i = partials_.size() - 1;
  double high = partials_[i];
  double low = 0;
  while (i > 0) {
    const double x = high;
    const double y = partials_[--i];
    high = x + y;
    low = y - (high - x);
    if (low != 0) break;
  }
  // `high` was rounded by `low`. When `low` lies exactly half-way between two doubles of the sum,
  // the partials below it say which way the exact sum lies: round away from the tie if they pull
  // the same way.
  if (i > 0 && ((low < 0 && partials_[i - 1] < 0) || (low > 0 && partials_[i - 1] > 0))) {
    const double twice = low * 2;
    const double moved = high + twice;
    if (twice == moved - high) high = moved;
  }
  return high;
}

}  // namespace ptprof
