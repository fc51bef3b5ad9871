#pragma once
// The taken branches of a decoded flow, thread by thread: a block that ended in a taken near
// transfer (jump, taken conditional, call, return) gives the branch {its last ip -> the first ip
// of the next block of the same thread}. Blocks split without a transfer (fall-through, a
// not-taken conditional) go on with the thread's run of branches; anything else (syscall,
// interrupt, far transfer, trace stop) and the events that are no blocks but touch the control
// flow (a gap, tracing disabled or enabled) break it: the branches before and after a break are
// not consecutive. `decode --branches` (src/report/branch_sample_writer.h) and `validate`'s side A
// (src/analyses/crossval/flow_edges.h) both follow this rule.
#include <cstdint>
#include <variant>

#include "src/model/trace_event.h"

namespace ptprof {

// Whether a block end is a taken near transfer (its next block's start is the target), a
// continuation without a transfer, or a break of the branch run.
enum class BlockEndRole { kTaken, kContinues, kBreaks };
inline BlockEndRole RoleOf(BlockEnd end) {
  switch (end) {
    case BlockEnd::kJump:
    case BlockEnd::kCondTaken:
    case BlockEnd::kCall:
    case BlockEnd::kReturn:
      return BlockEndRole::kTaken;
    case BlockEnd::kFallThrough:
    case BlockEnd::kCondNotTaken:
      return BlockEndRole::kContinues;
    default:
      return BlockEndRole::kBreaks;
  }
}

// The thread a flow's branches are followed on: the tid when known, else -1 - cpu.
inline int64_t FlowThread(int32_t cpu, int32_t tid) {
  return tid >= 0 ? tid : -1 - static_cast<int64_t>(cpu);
}

// Whether an event that is no block breaks its thread's run of branches: gaps and toggles do;
// other events do not touch the control flow.
inline bool BreaksBranchRun(const TraceEvent& event) {
  return std::holds_alternative<TraceGap>(event.body) ||
         std::holds_alternative<TraceToggle>(event.body);
}

// One thread's walk from block to block: a block that ended in a taken near transfer at `from`
// leaves the branch {from -> the next block's first ip} pending.
struct PendingBranch {
  bool taken = false;
  uint64_t from = 0;
  // The block [first_ip, last_ip] ending in `end` comes next: the pending branch into it, if
  // any, goes to `on_branch(from, first_ip)`; then its end decides what is pending (returned).
  template <class OnBranch>
  BlockEndRole Follow(uint64_t first_ip, uint64_t last_ip, BlockEnd end, OnBranch&& on_branch) {
    if (taken) on_branch(from, first_ip);
    const BlockEndRole role = RoleOf(end);
    taken = role == BlockEndRole::kTaken;
    if (taken) from = last_ip;
    return role;
  }
};

}  // namespace ptprof
