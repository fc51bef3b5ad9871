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
std::vector<TraceSegment> PlanSegments(const std::vector<uint64_t>& psbs, uint64_t size,
                                       uint64_t segment_bytes);

}  // namespace ptprof::pt
