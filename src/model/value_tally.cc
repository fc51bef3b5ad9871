#include "src/model/value_tally.h"

#include <algorithm>
#include <bit>

namespace ptprof {

namespace {

constexpr unsigned kFirstBits = 8;  // 256 slots, 4 KiB: a few hundred distinct values in L1

}  // namespace

ValueTally::ValueTally(size_t table_floor_bytes)
    : table_floor_(table_floor_bytes), listed_(table_floor_bytes == 0) {
  if (listed_) return;
  table_.resize(size_t{1} << kFirstBits);
  shift_ = 64 - kFirstBits;
}

ValueTally::ValueTally(std::initializer_list<double> values) : ValueTally() {
  for (double v : values) Add(v);
}

size_t ValueTally::Home(uint64_t bits, unsigned shift) {
  // Doubles that are small integers differ only in their top bits: mixed so that every bit
  // reaches the top ones the slot is taken from.
  bits ^= bits >> 33;
  bits *= 0xff51afd7ed558ccdull;
  bits ^= bits >> 33;
  return static_cast<size_t>((bits * 0x9e3779b97f4a7c15ull) >> shift);
}

void ValueTally::Count(double value, uint64_t times) {
  if (listed_) {
    for (uint64_t n = 0; n < times; ++n) list_.push_back(value);
    return;
  }
  // -0 and 0 are one value, as a comparison has them.
  const uint64_t bits = std::bit_cast<uint64_t>(value == 0 ? 0.0 : value);
  const size_t mask = table_.size() - 1;
  for (size_t i = Home(bits, shift_);; i = (i + 1) & mask) {
    Slot& slot = table_[i];
    if (slot.count == 0) {
      slot = {bits, times};
      if (++distinct_ * 2 > table_.size()) Grow();
      return;
    }
    if (slot.bits == bits) {
      slot.count += times;
      return;
    }
  }
}

void ValueTally::Merge(const ValueTally& other) {
  count_ += other.count_;
  sum_.Merge(other.sum_);
  if (other.listed_) {
    for (double v : other.list_) Count(v, 1);
    return;
  }
  for (const Slot& slot : other.table_)
    if (slot.count != 0) Count(std::bit_cast<double>(slot.bits), slot.count);
}

void ValueTally::Grow() {
  const size_t bytes = table_.size() * 2 * sizeof(Slot);
  if (bytes > table_floor_ && bytes > 2 * count_ * sizeof(double)) return List();
  std::vector<Slot> old(table_.size() * 2);
  old.swap(table_);
  --shift_;
  const size_t mask = table_.size() - 1;
  for (const Slot& slot : old) {
    if (slot.count == 0) continue;
    size_t i = Home(slot.bits, shift_);
    while (table_[i].count != 0) i = (i + 1) & mask;
    table_[i] = slot;
  }
}

void ValueTally::List() {
  HugeVector<double> list;
  for (const Slot& slot : table_)
    for (uint64_t n = 0; n < slot.count; ++n) list.push_back(std::bit_cast<double>(slot.bits));
  list_ = std::move(list);
  table_ = {};
  distinct_ = 0;
  listed_ = true;
}

std::vector<std::pair<double, uint64_t>> ValueTally::Distinct() const {
  std::vector<std::pair<double, uint64_t>> distinct;
  if (listed_) {
    std::vector<double> sorted(list_.begin(), list_.end());
    std::sort(sorted.begin(), sorted.end());
    for (double v : sorted) {
      if (!distinct.empty() && distinct.back().first == v)
        ++distinct.back().second;
      else
        distinct.emplace_back(v, 1);
    }
    return distinct;
  }
  distinct.reserve(distinct_);
  for (const Slot& slot : table_)
    if (slot.count != 0) distinct.emplace_back(std::bit_cast<double>(slot.bits), slot.count);
  std::sort(distinct.begin(), distinct.end());
  return distinct;
}

bool ValueTally::operator==(const ValueTally& other) const {
  return count_ == other.count_ && Distinct() == other.Distinct();
}

}  // namespace ptprof
