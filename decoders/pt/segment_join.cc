#include "decoders/pt/segment_join.h"

#include <algorithm>
#include <utility>
#include <variant>
#include <vector>

#include "src/model/event_equality.h"

namespace ptprof::pt {

namespace {

// How far around the cut the handover is looked for (JoinWindows): in a stream of instructions,
// where each block is several events, as far as in a stream of blocks.
JoinWindows WindowsOf(const DecodedSegment& prev, size_t prev_from) {
  const size_t end = std::min(prev.events.size(), prev_from + 16);
  for (size_t i = prev_from; i < end; ++i)
    if (!prev.events.MayHoldRefs(i, i + 1) &&
        std::holds_alternative<Instruction>(prev.events[i].body))
      return kInsnJoinWindows;
  return kBlockJoinWindows;
}

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

Candidates CandidatesOf(const DecodedSegment& prev, size_t prev_from, uint64_t next_begin,
                        const JoinWindows& windows) {
  // The first event from prev_from on at or past the next segment's start; where prev's decode
  // noted its first event past its cut (the same place), that saves the scan.
  size_t at_cut = prev_from;
  if (prev.at_cut != SIZE_MAX && prev.range.cut == next_begin && prev.at_cut >= prev_from)
    at_cut = std::min(prev.at_cut, prev.trusted);
  else
    while (at_cut < prev.trusted && prev.events.OffsetAt(at_cut) < next_begin) ++at_cut;
  Candidates candidates{
      std::max(prev_from, at_cut >= windows.before_cut ? at_cut - windows.before_cut : 0),
      std::min(prev.trusted, at_cut + windows.after_cut)};
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
  const JoinWindows windows = WindowsOf(prev, prev_from);
  const Candidates candidates = CandidatesOf(prev, prev_from, next.range.begin, windows);
  const size_t startup = std::min(next.trusted, windows.next_startup);
  // Every record of next the comparisons below may read must be an event, not a run reference
  // (which equals nothing): else no join, rather than one that full events might not give.
  const size_t next_reads =
      std::min(next.trusted, startup + (prev.trusted - std::min(prev.trusted, candidates.first)));
  if (next.events.MayHoldRefs(0, next_reads)) return std::nullopt;
  if (candidates.first >= candidates.last) return std::nullopt;
  // next's startup events by trace offset (equal events have equal offsets), so that each
  // candidate is compared with those of its offset only.
  std::vector<std::pair<uint64_t, size_t>> by_offset(startup);
  for (size_t j = 0; j < startup; ++j) by_offset[j] = {next.events.OffsetAt(j), j};
  std::sort(by_offset.begin(), by_offset.end());
  for (size_t k = candidates.first; k < candidates.last; ++k) {
    const uint64_t offset = prev.events.OffsetAt(k);
    auto it = std::lower_bound(by_offset.begin(), by_offset.end(),
                               std::pair<uint64_t, size_t>{offset, 0});
    std::optional<size_t> found;
    for (; it != by_offset.end() && it->first == offset; ++it) {
      const size_t j = it->second;
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
  const JoinWindows windows = WindowsOf(prev, prev_from);
  const Candidates candidates = CandidatesOf(prev, prev_from, next_begin, windows);
  if (candidates.first >= candidates.last) return windows.next_startup;
  // The longest comparison: from the first candidate to prev's trusted end, starting at the last
  // startup event of next.
  return windows.next_startup + (prev.trusted - candidates.first);
}

}  // namespace ptprof::pt
