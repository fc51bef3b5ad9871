#include "sideband/visible_ranges.h"

#include <algorithm>
#include <cstddef>

namespace ptprof {

void VisibleRanges::Add(uint64_t address, uint64_t size, uint64_t id) {
  if (size == 0) return;
  const uint64_t begin = address, end = address + size;
  auto at = [](auto& v, size_t i) { return v.begin() + static_cast<std::ptrdiff_t>(i); };
  size_t i = static_cast<size_t>(std::lower_bound(starts_.begin(), starts_.end(), begin) -
                                 starts_.begin());
  // A range that starts before the new section and reaches into it keeps its part before it, and
  // its part after it when it reaches past.
  if (i > 0 && ranges_[i - 1].end > begin) {
    const Range before = ranges_[i - 1];
    ranges_[i - 1].end = begin;
    if (before.end > end) {
      starts_.insert(at(starts_, i), end);
      ranges_.insert(at(ranges_, i), before);
    }
  }
  // Ranges that start inside it are dropped, but for the part of the last one that reaches past.
  size_t j = i;
  while (j < starts_.size() && starts_[j] < end) ++j;
  if (j > i && ranges_[j - 1].end > end) starts_[--j] = end;
  starts_.erase(at(starts_, i), at(starts_, j));
  ranges_.erase(at(ranges_, i), at(ranges_, j));
  starts_.insert(at(starts_, i), begin);
  ranges_.insert(at(ranges_, i), Range{id, end});
}

const VisibleRanges::Range* VisibleRanges::Find(uint64_t address) const {
  const auto after = std::upper_bound(starts_.begin(), starts_.end(), address);
  if (after == starts_.begin()) return nullptr;
  const Range& range = ranges_[static_cast<size_t>(after - starts_.begin()) - 1];
  return address < range.end ? &range : nullptr;
}

}  // namespace ptprof
