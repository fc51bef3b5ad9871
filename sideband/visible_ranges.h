#pragma once
// VisibleRanges answers "which section shows at this address, and up to where?" for sections
// added one after another, a later one hiding what it overlaps of the earlier ones (the rule of
// libipt's image, and of ImageSet). It keeps the visible ranges by start address, trimming or
// dropping the ones a new section covers, so a lookup is O(log n): a binary search over their
// starts, which lie side by side in one array (a lookup per block the analyses classify and per
// code block the fast engine builds, up to millions in a decode, over thousands of sections in an
// emulated recording, where each step of the search in a node-based map was a pointer to follow).
// Adding a section moves the ranges after it; sections come mostly in address order.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ptprof {

class VisibleRanges {
 public:
  struct Range {
    uint64_t id = 0;   // the caller's name for the section
    uint64_t end = 0;  // one past the last visible byte
  };

  // The section `id` at [address, address + size) hides what it overlaps. An empty one maps
  // nothing.
  void Add(uint64_t address, uint64_t size, uint64_t id);
  // The range that holds `address`, or nullptr when no section maps it.
  const Range* Find(uint64_t address) const;
  size_t size() const { return starts_.size(); }

 private:
  // The visible ranges, disjoint, in order: where each starts, and what it shows.
  std::vector<uint64_t> starts_;
  std::vector<Range> ranges_;
};

}  // namespace ptprof
