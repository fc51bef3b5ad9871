#include "sideband/visible_ranges.h"

#include <algorithm>
#include <iterator>

namespace ptprof {

VisibleRanges& VisibleRanges::operator=(const VisibleRanges& other) {
  if (this != &other) {
    ranges_ = other.ranges_;
    flat_.store(false, std::memory_order_release);
  }
  return *this;
}

VisibleRanges& VisibleRanges::operator=(VisibleRanges&& other) noexcept {
  ranges_ = std::move(other.ranges_);
  flat_.store(false, std::memory_order_release);
  return *this;
}

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
  flat_.store(false, std::memory_order_release);
}

void VisibleRanges::Flatten() const {
  std::lock_guard<std::mutex> lock(flattening_);
  if (flat_.load(std::memory_order_acquire)) return;
  starts_.clear();
  found_.clear();
  starts_.reserve(ranges_.size());
  found_.reserve(ranges_.size());
  for (const auto& [start, range] : ranges_) {
    starts_.push_back(start);
    found_.push_back(range);
  }
  flat_.store(true, std::memory_order_release);
}

const VisibleRanges::Range* VisibleRanges::FindFlat(uint64_t address) const {
  const auto after = std::upper_bound(starts_.begin(), starts_.end(), address);
  if (after == starts_.begin()) return nullptr;
  const Range& range = found_[static_cast<size_t>(after - starts_.begin()) - 1];
  return address < range.end ? &range : nullptr;
}

}  // namespace ptprof
