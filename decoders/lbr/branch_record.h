// Branch records: taken branches {from, to} as an LBR, a software branch tracer burst, or the taken
// branches of a decoded PT/ETM flow report them. The one shape every branch-record source converts
// into (decoders/lbr readers, src/record/swbt bursts) and that `decode --branches` and `validate`
// consume.
#pragma once

#include <cstdint>
#include <vector>

namespace ptprof {

struct BranchRecord {
  uint64_t from = 0;          // address of the branch instruction
  uint64_t to = 0;            // address it went to
  uint32_t cycles = 0;        // cycles since the previous record (LBR), when has_cycles
  bool has_cycles = false;
  bool mispred = false;       // the branch was mispredicted (LBR), when has_mispred
  bool has_mispred = false;
};

// One sample or burst: consecutive taken branches of one thread, OLDEST FIRST (perf's branch
// stacks are newest first; their reader reverses them).
struct BranchSample {
  uint64_t sample = 0;        // index of the sample/burst in its source, from 0
  uint32_t pid = 0;
  uint32_t tid = 0;
  int32_t cpu = -1;           // -1: unknown
  uint64_t time_ns = 0;       // when the sample was taken (0: unknown)
  uint64_t trace_offset = 0;  // byte offset of the sample/burst in its source file
  std::vector<BranchRecord> branches;
};

}  // namespace ptprof
