#include "sideband/section_index.h"

#include <algorithm>
#include <queue>

namespace ptprof {

namespace {

// A section's end, kept inside the address space (a section may reach its very top).
uint64_t EndOf(const SectionIndex::Range& r) {
  return r.address + r.size < r.address ? UINT64_MAX : r.address + r.size;
}

}  // namespace

SectionIndex::SectionIndex(const std::vector<Range>& sections) {
  std::vector<uint64_t> bounds;
  std::vector<uint32_t> by_start;
  for (uint32_t i = 0; i < sections.size(); ++i) {
    if (sections[i].size == 0) continue;
    bounds.push_back(sections[i].address);
    bounds.push_back(EndOf(sections[i]));
    by_start.push_back(i);
  }
  std::sort(bounds.begin(), bounds.end());
  bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
  std::stable_sort(by_start.begin(), by_start.end(), [&](uint32_t a, uint32_t b) {
    return sections[a].address < sections[b].address;
  });
  // Sweep the pieces between consecutive bounds: the latest section covering a piece shows there.
  std::priority_queue<uint32_t> active;  // section indices; the largest is the latest added
  size_t next = 0;
  for (size_t k = 0; k + 1 < bounds.size(); ++k) {
    const uint64_t from = bounds[k], to = bounds[k + 1];
    while (next < by_start.size() && sections[by_start[next]].address <= from)
      active.push(by_start[next++]);
    while (!active.empty() && EndOf(sections[active.top()]) <= from) active.pop();
    if (active.empty()) continue;
    const uint32_t owner = active.top();
    if (!spans_.empty() && spans_.back().section == owner && spans_.back().end == from)
      spans_.back().end = to;
    else
      spans_.push_back(Span{from, to, owner});
  }
}

const SectionIndex::Span* SectionIndex::Find(uint64_t address) const {
  auto it = std::upper_bound(spans_.begin(), spans_.end(), address,
                             [](uint64_t a, const Span& s) { return a < s.start; });
  if (it == spans_.begin()) return nullptr;
  --it;
  return address < it->end ? &*it : nullptr;
}

}  // namespace ptprof
