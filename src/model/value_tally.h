#pragma once
// ValueTally answers "which values came, how many times each, and what do they add up to?" for
// the millions of values a delta profile of a frequent pair gives (one instruction count and one
// time per interval: 1.3 million of each on sort's call,ret). It is exact: a multiset of doubles
// (told apart by their bits, -0 as 0) and their exact sum (ExactSum), so that tallies taken in
// parts and merged are the tally taken in one, and a histogram made from it is the one made from
// the values themselves.
//
// Such values repeat: sort's 1.3 million instruction counts take a few hundred distinct values.
// So it counts each distinct value in a small open-addressed table, where a list of the values
// took 8 bytes a value of fresh memory, which a VM faults in slowly, and a histogram had to scan
// it all. When the values hardly repeat (the table would outgrow twice the list), it keeps the
// values themselves instead, as the list did (in no particular order).
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <utility>
#include <vector>

#include "src/model/exact_sum.h"
#include "src/model/huge_vector.h"

namespace ptprof {

class ValueTally {
 public:
  // `table_floor_bytes`: a table of up to this size is kept however few the repeats (smaller
  // in tests, to reach the list; 0: the values are listed from the first).
  explicit ValueTally(size_t table_floor_bytes = kTableFloor);
  ValueTally(std::initializer_list<double> values);

  void Add(double value) {
    ++count_;
    sum_.Add(value);
    Count(value, 1);
  }
  // Adds what `other` holds.
  void Merge(const ValueTally& other);

  uint64_t count() const { return count_; }
  bool empty() const { return count_ == 0; }
  // The values' exact sum, rounded once.
  double sum() const { return sum_.Value(); }

  // Whether the values themselves are kept (too few repeats), in values().
  bool listed() const { return listed_; }
  // With listed(): the values, in no particular order.
  std::span<const double> values() const { return {list_.data(), list_.size()}; }
  // Each distinct value with its count, ascending (from the list, when listed()).
  std::vector<std::pair<double, uint64_t>> Distinct() const;

  // The same values as often each (the order of a list aside).
  bool operator==(const ValueTally& other) const;

  // Below this the table is never traded for the list (1 MiB: 32 K distinct values at most).
  static constexpr size_t kTableFloor = size_t{1} << 20;

 private:
  struct Slot {
    uint64_t bits = 0;
    uint64_t count = 0;  // 0: an empty slot
  };
  // `times` more of `value` in the table or the list (not in count_ and sum_).
  void Count(double value, uint64_t times);
  static size_t Home(uint64_t bits, unsigned shift);
  void Grow();
  // From counts to the values themselves: each distinct value as many times as it came.
  void List();

  std::vector<Slot> table_;
  unsigned shift_ = 0;   // 64 less the table's log2 size
  size_t distinct_ = 0;  // occupied slots
  HugeVector<double> list_;
  uint64_t count_ = 0;
  ExactSum sum_;
  size_t table_floor_;
  bool listed_ = false;
};

}  // namespace ptprof
