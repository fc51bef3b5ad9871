#include "src/model/exact_sum.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

namespace ptprof {
namespace {

double SumOf(const std::vector<double>& values) {
  ExactSum sum;
  for (double v : values) sum.Add(v);
  return sum.Value();
}

TEST_CASE("an exact sum loses nothing a pass in order rounds away") {
  // In order, 1e16 + 1 rounds back to 1e16 and the 1 is lost.
  CHECK(SumOf({1e16, 1.0, -1e16}) == 1.0);
  CHECK(SumOf({1e100, 1.0, -1e100, 1e-100}) == 1.0 + 1e-100);
  CHECK(SumOf({}) == 0);
  CHECK(SumOf({2.5}) == 2.5);
  // Whole numbers: the plain sum.
  std::vector<double> counts;
  double plain = 0;
  for (int i = 0; i < 100000; ++i) {
    counts.push_back(i % 977);
    plain += i % 977;
  }
  CHECK(SumOf(counts) == plain);
}

TEST_CASE("an exact sum rounds once, to the nearest, ties to even") {
  const double ulp = std::ldexp(1.0, -52);  // of 1.0
  // 1 + ulp/2 is a tie between 1 and 1 + ulp: to even (1). A little more, and it rounds up.
  CHECK(SumOf({1.0, ulp / 2}) == 1.0);
  CHECK(SumOf({1.0, ulp / 2, ulp / 1024}) == 1.0 + ulp);
  CHECK(SumOf({1.0, ulp / 2, -ulp / 1024}) == 1.0);
  CHECK(SumOf({1.0 + ulp, ulp / 2}) == 1.0 + 2 * ulp);  // tie, to even (up)
}

TEST_CASE("an exact sum is the same in any order and in merged parts") {
  std::mt19937_64 random(3);
  std::uniform_real_distribution<double> mantissa(-1, 1);
  std::uniform_int_distribution<int> exponent(-40, 60);
  std::vector<double> values;
  for (int i = 0; i < 5000; ++i) values.push_back(std::ldexp(mantissa(random), exponent(random)));
  const double sum = SumOf(values);
  for (int trial = 0; trial < 5; ++trial) {
    std::shuffle(values.begin(), values.end(), random);
    CHECK(SumOf(values) == sum);
    ExactSum merged, part;
    for (size_t i = 0; i < values.size(); ++i) {
      part.Add(values[i]);
      if (i % 700 == 699) {
        merged.Merge(part);
        part = ExactSum();
      }
    }
    merged.Merge(part);
    CHECK(merged.Value() == sum);
  }
}

}  // namespace
}  // namespace ptprof
