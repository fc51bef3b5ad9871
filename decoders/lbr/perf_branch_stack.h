#pragma once
// PerfBranchStacks answers "which taken branches did the hardware's last-branch records (LBR)
// hold at each sample of this perf.data?": every PERF_RECORD_SAMPLE of an event that samples
// PERF_SAMPLE_BRANCH_STACK becomes one BranchSample, its records turned OLDEST FIRST (perf stores
// the newest first), with the pid/tid/time/cpu of the sample, its file offset, and the LBR flags
// that BranchRecord does not carry (predicted, in_tx, abort, branch type) and the hw_idx that
// PERF_SAMPLE_BRANCH_HW_INDEX adds.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "decoders/lbr/branch_record.h"
#include "sideband/perf/perf_data.h"
#include "src/model/result.h"

namespace ptprof {

// What one LBR entry says beyond {from, to, cycles, mispred}.
struct LbrEntryFlags {
  bool predicted = false;
  bool in_tx = false;   // in a TSX transaction
  bool abort = false;   // a TSX abort
  uint8_t type = 0;     // perf's branch type (bits 20..23 of the flags word; 0: unknown)
};

// One sample with a branch stack.
struct LbrSample {
  BranchSample sample;                 // branches oldest first
  std::vector<LbrEntryFlags> flags;    // parallel to sample.branches
  std::optional<uint64_t> ip;          // the sample's ip, when sampled
  std::optional<uint64_t> hw_idx;      // PERF_SAMPLE_BRANCH_HW_INDEX: the LBR's top-of-stack index
};

// The branch stacks of `data` (parsed with PerfDataOptions::keep_samples). Fails, naming the file,
// when no event of the file samples PERF_SAMPLE_BRANCH_STACK ("no branch stacks"). Samples of
// other events are skipped. `sample` numbers the samples with branch stacks from 0.
Result<std::vector<LbrSample>> ReadPerfBranchStacks(const perf::PerfData& data);

// The LBR entry of a perf branch_entry: BranchRecord plus its flags.
BranchRecord BranchRecordOf(const perf::BranchEntry& entry);
LbrEntryFlags LbrEntryFlagsOf(const perf::BranchEntry& entry);

// True when any event of `data` samples branch stacks.
bool HasBranchStacks(const perf::PerfData& data);

}  // namespace ptprof
