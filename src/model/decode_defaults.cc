#include "src/model/decode_defaults.h"

#include <algorithm>
#include <atomic>

namespace ptprof {

namespace {

std::atomic<unsigned> default_jobs{1};
std::atomic<uint64_t> chosen_segment_bytes{0};

}  // namespace

void SetDefaultDecodeJobs(unsigned jobs) { default_jobs = std::max(jobs, 1u); }
unsigned DefaultDecodeJobs() { return default_jobs; }
void SetDefaultSegmentBytes(uint64_t bytes) { chosen_segment_bytes = std::max<uint64_t>(bytes, 1); }
uint64_t DefaultSegmentBytes() {
  const uint64_t chosen = chosen_segment_bytes;
  return chosen ? chosen : 256u << 10;
}
uint64_t ChosenSegmentBytes() { return chosen_segment_bytes; }

}  // namespace ptprof
