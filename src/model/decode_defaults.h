#pragma once
// The process-wide parallel-decode settings every trace decoder uses when its caller leaves them
// open (PT: FlowRequest's jobs = 0 and segment_bytes = 0; CoreSight: EtmDecoder::Decode): the
// command line's --jobs and --psb-segment set them. Initially 1 (in one piece) and 256 KiB.
#include <cstdint>

namespace ptprof {

void SetDefaultDecodeJobs(unsigned jobs);
// One thread unless asked: each worker holds the events of the pieces it decoded ahead (about
// 100 MB a PT segment on a dense trace), and where pieces do not join the decode does the work of
// some of them twice (docs/performance.md).
unsigned DefaultDecodeJobs();
void SetDefaultSegmentBytes(uint64_t bytes);
uint64_t DefaultSegmentBytes();
// What SetDefaultSegmentBytes set, 0 when nothing did (a decode may then pick its own size).
uint64_t ChosenSegmentBytes();

}  // namespace ptprof
