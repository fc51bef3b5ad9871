#pragma once
// VisibleRanges answers "which section shows at this address, and up to where?" for sections
// added one after another, a later one hiding what it overlaps of the earlier ones (the rule of
// libipt's image, and of ImageSet). It keeps the visible ranges by start address, trimming or
// dropping the ones a new section covers (a map: O(log n) an Add, in any order), and looks them
// up by a binary search over their starts, which lie side by side in one array, made at the
// first lookup after an Add. A lookup comes per block the analyses classify and per code block
// the fast engine builds, up to millions in a decode, over thousands of sections in an emulated
// recording: in the map each step of the search was a pointer to follow.
// Lookups may run on several threads at once; an Add runs beside nothing else.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

namespace ptprof {

class VisibleRanges {
 public:
  struct Range {
    uint64_t id = 0;   // the caller's name for the section
    uint64_t end = 0;  // one past the last visible byte
  };

  VisibleRanges() = default;
  // Copies and moves take the ranges; the array is made again at the first lookup.
  VisibleRanges(const VisibleRanges& other) : ranges_(other.ranges_) {}
  VisibleRanges(VisibleRanges&& other) noexcept : ranges_(std::move(other.ranges_)) {}
  VisibleRanges& operator=(const VisibleRanges& other);
  VisibleRanges& operator=(VisibleRanges&& other) noexcept;

  // The section `id` at [address, address + size) hides what it overlaps. An empty one maps
  // nothing.
  void Add(uint64_t address, uint64_t size, uint64_t id);
  // The range that holds `address`, or nullptr when no section maps it (valid until the next
  // Add).
  const Range* Find(uint64_t address) const {
    if (!flat_.load(std::memory_order_acquire)) Flatten();
    return FindFlat(address);
  }
  size_t size() const { return ranges_.size(); }

 private:
  // Makes starts_ and found_ from ranges_, once (the first lookups may come at once).
  void Flatten() const;
  const Range* FindFlat(uint64_t address) const;

  std::map<uint64_t, Range> ranges_;  // by start; disjoint
  // For Find, once flat_: the starts in order, and the range of each.
  mutable std::vector<uint64_t> starts_;
  mutable std::vector<Range> found_;
  mutable std::atomic<bool> flat_{false};
  mutable std::mutex flattening_;
};

}  // namespace ptprof
