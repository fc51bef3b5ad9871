#pragma once
// ExactSum answers "what do these doubles add up to?" exactly, whatever their order: it keeps the
// running sum as a few doubles that do not overlap (each addition splits off its rounding error
// instead of losing it), and gives the sum rounded once, to the nearest double. So a sum taken in
// parts and merged is the sum taken in one pass, to the bit: a delta profile taken in parts on
// several threads has the mean of the one taken on one. On whole numbers below 2^53 (instruction
// counts) it is one double, and costs a compare and an add.
// Finite values only: an infinity or a NaN has no exact sum.
#include <vector>

namespace ptprof {

class ExactSum {
 public:
  void Add(double value) {
    // The common case, one partial and a sum without rounding (whole numbers): the new sum
    // replaces it. The rounding error by Knuth's two-sum, which needs no order of magnitudes.
    if (partials_.size() == 1) {
      const double a = partials_[0];
      const double sum = a + value;
      const double b = sum - a;
      if ((a - (sum - b)) + (value - b) == 0) {
        partials_[0] = sum;
        return;
      }
    }
    AddSplitting(value);
  }
  // Adds what `other` holds.
  void Merge(const ExactSum& other);
  // The exact sum rounded to the nearest double (ties to even).
  double Value() const;

 private:
  void AddSplitting(double value);
  // Non-overlapping, in increasing magnitude; their exact sum is the sum. Usually one or two.
  std::vector<double> partials_;
};

}  // namespace ptprof
