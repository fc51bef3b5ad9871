#include "decoders/etm/etm_segments.h"

#include <algorithm>

#include "decoders/etm/element_events.h"
#include "src/model/event_equality.h"

namespace ptprof::etm {

namespace {

// A join is proved by the whole rest of prev; fewer events than this prove too little.
constexpr size_t kMinAgreeing = 16;

// Whether next's event is prev's. A piece's decode stamps an event with no TSC until it meets a
// timestamp of the event's trace ID itself; the stitching stamps such an event with the last
// timestamp passed on for that ID, which is what prev's event carries at the same place.
bool Agree(const TraceEvent& prev, const TraceEvent& next) {
  if (next.header.tsc == kUnknownTime) return SameEventBesidesTsc(prev, next);
  return SameEvent(prev, next);
}

}  // namespace

uint64_t EtmOverlapFor(uint64_t segment_bytes) {
  return std::max<uint64_t>(segment_bytes / 8, 16 * 1024);
}

std::vector<EtmSegment> PlanEtmSegments(uint64_t usable, uint64_t segment_bytes, uint64_t align,
                                        uint64_t overlap) {
  std::vector<EtmSegment> segments;
  align = std::max<uint64_t>(align, 1);
  const uint64_t step = std::max<uint64_t>(segment_bytes / align * align, align);
  if (usable < 2 * step) return segments;
  for (uint64_t begin = 0; begin < usable; begin += step) {
    EtmSegment s;
    s.begin = begin;
    s.cut = begin + step;
    // A last piece shorter than half a step goes with the one before.
    if (s.cut >= usable || usable - s.cut < step / 2) s.cut = usable;
    s.end = std::min(usable, s.cut + overlap);
    segments.push_back(s);
    if (s.cut == usable) break;
  }
  if (segments.size() < 2) segments.clear();
  return segments;
}

TraceIds SyncedIn(const EventChunks& events, const std::vector<uint8_t>& marks, size_t from,
                  TraceIds synced) {
  for (size_t k = from; k < events.size(); ++k)
    if ((marks[k] & 0x80) && !IsNoSync(events[k])) synced.set(marks[k] & 0x7f);
  return synced;
}

std::optional<EtmJoin> FindEtmJoin(const EventChunks& prev, size_t prev_from,
                                   const EventChunks& next,
                                   const std::vector<uint8_t>& next_marks, uint64_t next_begin,
                                   const TraceIds& must_sync) {
  // The earliest event of prev the stream may hand over at: at or past next's first byte.
  size_t first = prev_from;
  while (first < prev.size() && prev[first].header.offset < next_begin) ++first;
  if (first >= prev.size() || prev.size() - first < kMinAgreeing) return std::nullopt;
  // Every line-up ends with prev's last event: for each event of next that agrees with it, walk
  // back while both agree. A line-up that agrees from prev[k] to the end is a join at k; the
  // join is at the smallest such k, and must be the only line-up there. (Linear: asking each k
  // in turn compares the same tails again and again.)
  const size_t last = prev.size() - 1;
  // Where next's decoder has synchronised every source it must have: a line-up must reach it.
  size_t synced_at = 0;
  TraceIds missing = must_sync;
  for (size_t j = 0; j < next.size() && missing.any(); ++j) {
    const uint8_t mark = j < next_marks.size() ? next_marks[j] : 0;
    if ((mark & 0x80) && !IsNoSync(next[j])) {
      missing.reset(mark & 0x7f);
      synced_at = j;
    }
  }
  if (missing.any()) return std::nullopt;
  std::optional<EtmJoin> best;
  bool ambiguous = false;
  for (size_t j_last = synced_at; j_last < next.size(); ++j_last) {
    if (next[j_last].header.offset != prev[last].header.offset ||
        !Agree(prev[last], next[j_last]))
      continue;
    size_t k = last, j = j_last;
    while (k > first && j > 0 && Agree(prev[k - 1], next[j - 1])) {
      --k;
      --j;
    }
    if (prev.size() - k < kMinAgreeing) continue;
    if (!best || k < best->prev_end) {
      best = EtmJoin{k, j};
      ambiguous = false;
    } else if (k == best->prev_end) {
      ambiguous = true;  // two line-ups from the same event: proves nothing
    }
  }
  if (!best || ambiguous) return std::nullopt;
  return best;
}

}  // namespace ptprof::etm
