#include "decoders/pt/psb_segments.h"

#include <algorithm>
#include <cstring>

namespace ptprof::pt {

namespace {
constexpr uint8_t kPsb[16] = {0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
                              0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82};
}  // namespace

std::vector<uint64_t> FindPsbOffsets(std::span<const uint8_t> trace) {
  std::vector<uint64_t> offsets;
  const uint8_t* data = trace.data();
  size_t at = 0;
  while (at + sizeof kPsb <= trace.size()) {
    const void* hit = std::memchr(data + at, 0x02, trace.size() - sizeof kPsb + 1 - at);
    if (!hit) break;
    at = static_cast<size_t>(static_cast<const uint8_t*>(hit) - data);
    if (std::memcmp(data + at, kPsb, sizeof kPsb) == 0) {
      offsets.push_back(at);
      at += sizeof kPsb;
    } else {
      ++at;
    }
  }
  return offsets;
}

std::vector<TraceSegment> PlanSegments(const std::vector<uint64_t>& psbs, uint64_t size,
                                       uint64_t segment_bytes) {
  std::vector<TraceSegment> segments;
  uint64_t begin = 0;
  size_t next = 0;  // the first PSB not yet looked at
  for (;;) {
    // The first PSB at least segment_bytes further on with two more PSBs after it.
    while (next < psbs.size() && psbs[next] < begin + std::max<uint64_t>(segment_bytes, 1)) ++next;
    if (next + 2 >= psbs.size()) break;
    const uint64_t cut = psbs[next];
    segments.push_back(TraceSegment{begin, cut, psbs[next + 1], psbs[next + 2]});
    begin = cut;
    ++next;
  }
  segments.push_back(TraceSegment{begin, size, size, size});
  return segments;
}

}  // namespace ptprof::pt
