#include "decoders/pt/psb_segments.h"

#include <algorithm>
#include <cstring>

namespace ptprof::pt {

namespace {
constexpr uint8_t kPsb[16] = {0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
                              0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82};
}  // namespace

std::vector<uint64_t> FindPsbOffsets(std::span<const uint8_t> trace) {
  // A PSB starting at o holds the whole 8-byte word at the first multiple of 8 from o on (at most
  // o + 8), which then reads 02 82 02 82 ... or 82 02 82 02 ...: only around such words are the
  // starts compared, the first from where the search stands (after the last PSB found), in order.
  // Reading words instead of looking for each 0x02 (the first byte of every extended packet)
  // makes this several times faster on a dense trace.
  std::vector<uint64_t> offsets;
  const uint8_t* data = trace.data();
  const size_t size = trace.size();
  uint64_t even, odd;
  std::memcpy(&even, kPsb, 8);
  std::memcpy(&odd, kPsb + 1, 8);
  size_t at = 0;  // no PSB starts before it that was not found
  for (size_t word = 0; word + 8 <= size; word += 8) {
    uint64_t value;
    std::memcpy(&value, data + word, 8);
    if (value != even && value != odd) continue;
    for (size_t start = std::max(at, word >= 8 ? word - 8 : 0);
         start <= word && start + sizeof kPsb <= size;) {
      if (data[start] == 0x02 && std::memcmp(data + start, kPsb, sizeof kPsb) == 0) {
        offsets.push_back(start);
        start += sizeof kPsb;
        at = start;
      } else {
        ++start;
      }
    }
    at = std::max(at, word + 1);
  }
  return offsets;
}

std::vector<TraceSegment> PlanSegments(const std::vector<uint64_t>& psbs, uint64_t size,
                                       uint64_t segment_bytes, unsigned taper_jobs) {
  std::vector<TraceSegment> segments;
  uint64_t begin = 0;
  size_t next = 0;  // the first PSB not yet looked at
  for (;;) {
    uint64_t bytes = std::max<uint64_t>(segment_bytes, 1);
    if (taper_jobs != 0) {
      // Toward the end, a share of what is left: each thread's last segments get shorter, so the
      // threads run out of work at about the same time.
      const uint64_t share = (size - begin) / (uint64_t{kTaperShares} * taper_jobs);
      bytes = std::min(bytes, std::max(share, std::max<uint64_t>(bytes / kTaperFloor, 1)));
    }
    // The first PSB at least that far on with two more PSBs after it.
    while (next < psbs.size() && psbs[next] < begin + bytes) ++next;
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
