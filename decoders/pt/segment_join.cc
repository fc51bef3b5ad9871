#include "decoders/pt/segment_join.h"

#include <algorithm>

#include "decoders/pt/event_equality.h"

namespace ptprof::pt {

namespace {

// How far around the cut the handover is looked for: the next decode starts with a few events of
// its own (its first block begins at the PSB's IP, not where the previous block began).
constexpr size_t kBeforeCut = 8;
constexpr size_t kAfterCut = 64;
constexpr size_t kNextStartup = 256;

// Whether prev.events[k, trusted) equal next.events[j, ...).
bool TailsAgree(const DecodedSegment& prev, size_t k, const DecodedSegment& next, size_t j) {
  const size_t length = prev.trusted - k;
  if (j + length > next.trusted) return false;
  for (size_t i = 0; i < length; ++i)
    if (!SameEvent(prev.events[k + i], next.events[j + i])) return false;
  return true;
}

}  // namespace

std::optional<SegmentJoin> FindJoin(const DecodedSegment& prev, size_t prev_from,
                                    const DecodedSegment& next) {
  if (prev.trusted > prev.events.size() || next.trusted > next.events.size()) return std::nullopt;
  // The first event from prev_from on at or past the next segment's start; where prev's decode
  // noted its first event past its cut (the same place), that saves the scan.
  size_t at_cut = prev_from;
  if (prev.at_cut != SIZE_MAX && prev.range.cut == next.range.begin && prev.at_cut >= prev_from)
    at_cut = std::min(prev.at_cut, prev.trusted);
  else
    while (at_cut < prev.trusted && prev.events[at_cut].header.offset < next.range.begin) ++at_cut;
  const size_t first = std::max(prev_from, at_cut >= kBeforeCut ? at_cut - kBeforeCut : 0);
  const size_t last = std::min(prev.trusted, at_cut + kAfterCut);
  const size_t startup = std::min(next.trusted, kNextStartup);
  for (size_t k = first; k < last; ++k) {
    std::optional<size_t> found;
    for (size_t j = 0; j < startup; ++j) {
      if (!SameEvent(prev.events[k], next.events[j]) || !TailsAgree(prev, k, next, j)) continue;
      if (found) return std::nullopt;  // two ways to line them up: prove nothing
      found = j;
    }
    if (found) return SegmentJoin{k, *found};
  }
  return std::nullopt;
}

}  // namespace ptprof::pt
