#include "sideband/visible_ranges.h"

#include <iterator>

namespace ptprof {

void VisibleRanges::Add(uint64_t address, uint64_t size, uint64_t id) {
  if (size == 0) return;
  const uint64_t begin = address, end = address + size;
  // A range that starts before the new section and reaches into it keeps its part before it, and
  // its part after it when it reaches past.
  auto it = ranges_.lower_bound(begin);
  if (it != ranges_.begin()) {
    auto before = std::prev(it);
    if (before->second.end > begin) {
      const Range tail = before->second;
      before->second.end = begin;
      if (tail.end > end) ranges_[end] = tail;
    }
  }
  // Ranges that start inside it are dropped, but for the part of the last one that reaches past.
  it = ranges_.lower_bound(begin);
  while (it != ranges_.end() && it->first < end) {
    if (it->second.end > end) {
      const Range rest = it->second;
      ranges_.erase(it);
      ranges_[end] = rest;
      break;
    }
    it = ranges_.erase(it);
  }
  ranges_[begin] = Range{id, end};
}

const VisibleRanges::Range* VisibleRanges::Find(uint64_t address) const {
  auto it = ranges_.upper_bound(address);
  if (it == ranges_.begin()) return nullptr;
  --it;
  return address < it->second.end ? &it->second : nullptr;
}

}  // namespace ptprof
