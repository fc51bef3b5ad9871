#pragma once
// PlanSegments answers "where can a PT trace be cut into pieces that decode on their own?": at
// PSB packets, whose PSB+ header restates the IP, the execution mode and the timing state (and
// after which the CPU compresses no return whose call came before the PSB). Each piece is decoded
// a little past its cut, so that its decode and the next piece's overlap and can be compared.
#include <cstdint>
#include <span>
#include <vector>

namespace ptprof::pt {

// The offsets of the PSB packets (their 16-byte pattern) in `trace`, in order.
std::vector<uint64_t> FindPsbOffsets(std::span<const uint8_t> trace);

struct TraceSegment {
  uint64_t begin = 0;      // where its decoder starts: 0 for the first, else a PSB
  uint64_t cut = 0;        // where the next segment begins (a PSB); the trace size for the last
  uint64_t trust_end = 0;  // its events from before this offset are those of an uncut decode
  uint64_t end = 0;        // its decoder reads [begin, end): to the second PSB after the cut
  bool last() const { return cut == end; }
};

// Segments of about `segment_bytes` each (at least one), cut at PSBs that have two more PSBs
// after them; `psbs` as FindPsbOffsets returns them, `size` the trace's.
// With `taper_jobs` threads to decode them (0: no tapering), the segments toward the end are
// shorter: each is at most a kTaperShares * taper_jobs-th of the bytes left from its start, and at
// least a kTaperFloor-th of `segment_bytes`. Threads that take segments in order then finish
// within about a short segment of each other, instead of one of them decoding a whole last
// segment while the others wait.
inline constexpr unsigned kTaperShares = 1;
inline constexpr unsigned kTaperFloor = 4;
std::vector<TraceSegment> PlanSegments(const std::vector<uint64_t>& psbs, uint64_t size,
                                       uint64_t segment_bytes, unsigned taper_jobs = 0);

}  // namespace ptprof::pt
