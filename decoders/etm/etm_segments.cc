#include "decoders/etm/etm_segments.h"

#include <algorithm>
#include <atomic>
#include <unordered_map>

#include "src/model/event_equality.h"

namespace ptprof::etm {

namespace {

std::atomic<unsigned> default_jobs{1};
std::atomic<uint64_t> default_segment_bytes{256 * 1024};

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

void SetDefaultEtmDecodeJobs(unsigned jobs) { default_jobs = std::max(jobs, 1u); }
unsigned DefaultEtmDecodeJobs() { return default_jobs; }
void SetDefaultEtmSegmentBytes(uint64_t bytes) { default_segment_bytes = std::max<uint64_t>(bytes, 1); }
uint64_t DefaultEtmSegmentBytes() { return default_segment_bytes; }

uint64_t EtmOverlapFor(uint64_t segment_bytes) {
  return std::max<uint64_t>(segment_bytes / 4, 16 * 1024);
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

std::optional<EtmJoin> FindEtmJoin(const std::vector<TraceEvent>& prev, size_t prev_from,
                                   const std::vector<TraceEvent>& next, uint64_t next_begin) {
  // next's events by offset: the candidates for lining up with one of prev's.
  std::unordered_multimap<uint64_t, size_t> next_at;
  next_at.reserve(next.size());
  for (size_t j = 0; j < next.size(); ++j) next_at.emplace(next[j].header.offset, j);
  for (size_t k = prev_from; k < prev.size(); ++k) {
    if (prev[k].header.offset < next_begin) continue;
    const size_t length = prev.size() - k;
    if (length < kMinAgreeing) return std::nullopt;
    std::optional<size_t> found;
    auto [first, last] = next_at.equal_range(prev[k].header.offset);
    for (auto it = first; it != last; ++it) {
      const size_t j = it->second;
      if (j + length > next.size()) continue;
      bool agree = true;
      for (size_t i = 0; i < length && agree; ++i) agree = Agree(prev[k + i], next[j + i]);
      if (!agree) continue;
      if (found && *found != j) return std::nullopt;  // two line-ups: proves nothing
      found = j;
    }
    if (found) return EtmJoin{k, *found};
  }
  return std::nullopt;
}

}  // namespace ptprof::etm
