#include "decoders/pt/segment_join.h"

#include <algorithm>

#include "src/model/event_equality.h"

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
    if (!prev.events.SameAt(k + i, next.events, j + i)) return false;
  return true;
}

// The candidates FindJoin tries in prev: [first, last).
struct Candidates {
  size_t first = 0, last = 0;
};

Candidates CandidatesOf(const DecodedSegment& prev, size_t prev_from, uint64_t next_begin) {
  // The first event from prev_from on at or past the next segment's start; where prev's decode
  // noted its first event past its cut (the same place), that saves the scan.
  size_t at_cut = prev_from;
  if (prev.at_cut != SIZE_MAX && prev.range.cut == next_begin && prev.at_cut >= prev_from)
    at_cut = std::min(prev.at_cut, prev.trusted);
  else
    while (at_cut < prev.trusted && prev.events.OffsetAt(at_cut) < next_begin) ++at_cut;
  Candidates candidates{std::max(prev_from, at_cut >= kBeforeCut ? at_cut - kBeforeCut : 0),
                        std::min(prev.trusted, at_cut + kAfterCut)};
  // None where the tail compared would hold a run reference (src/model/run_ref.h), which equals
  // nothing: a join after it hands over the same events as one before it would have.
  if (prev.events.MayHoldRefs(candidates.first, prev.trusted))
    candidates.first = std::max(candidates.first, prev.events.refs_end());
  return candidates;
}

}  // namespace

std::optional<SegmentJoin> FindJoin(const DecodedSegment& prev, size_t prev_from,
                                    const DecodedSegment& next) {
  if (prev.trusted > prev.events.size() || next.trusted > next.events.size()) return std::nullopt;
  const Candidates candidates = CandidatesOf(prev, prev_from, next.range.begin);
  const size_t startup = std::min(next.trusted, kNextStartup);
  // Every record of next the comparisons below may read must be an event, not a run reference
  // (which equals nothing): else no join, rather than one that full events might not give.
  const size_t next_reads =
      std::min(next.trusted, startup + (prev.trusted - std::min(prev.trusted, candidates.first)));
  if (next.events.MayHoldRefs(0, next_reads)) return std::nullopt;
  for (size_t k = candidates.first; k < candidates.last; ++k) {
    std::optional<size_t> found;
    for (size_t j = 0; j < startup; ++j) {
      if (!prev.events.SameAt(k, next.events, j) || !TailsAgree(prev, k, next, j)) continue;
      if (found) return std::nullopt;  // two ways to line them up: prove nothing
      found = j;
    }
    if (found) return SegmentJoin{k, *found};
  }
  return std::nullopt;
}

size_t NextEventsFindJoinReads(const DecodedSegment& prev, size_t prev_from, uint64_t next_begin) {
  if (prev.trusted > prev.events.size()) return 0;
  const Candidates candidates = CandidatesOf(prev, prev_from, next_begin);
  if (candidates.first >= candidates.last) return kNextStartup;
  // The longest comparison: from the first candidate to prev's trusted end, starting at the last
  // startup event of next.
  return kNextStartup + (prev.trusted - candidates.first);
}

}  // namespace ptprof::pt
