#pragma once
// FlowBranches answers "which taken branches did this decoded flow execute, thread by thread?":
// an EventSink over ExecBlocks that reports, for every block that ended in a taken near transfer
// (jump, taken conditional, call, return), the branch {block's last ip -> next block's first ip}
// of the same thread. Blocks split without a transfer (fall-through, not-taken conditional)
// continue the run; anything else (syscall, interrupt, far transfer, trace stop, a gap, tracing
// disabled) breaks it: the records before and after a break are not consecutive.
#include <cstdint>
#include <functional>
#include <unordered_map>
#include <variant>

#include "decoders/lbr/branch_record.h"
#include "src/model/event_sink.h"

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

// Where a flow's branches come from: the thread (tid, else the cpu) and the block that ended.
struct FlowBranchSite {
  int64_t thread = 0;  // tid when known, else -1 - cpu
  int32_t pid = -1;
  int32_t cpu = -1;
  uint64_t time_ns = 0;
  uint64_t offset = 0;  // trace offset of the block that ended in the branch
};

class FlowBranches : public EventSink {
 public:
  using OnBranch = std::function<void(const FlowBranchSite&, const BranchRecord&)>;
  using OnBreak = std::function<void(int64_t thread)>;
  FlowBranches(OnBranch on_branch, OnBreak on_break)
      : on_branch_(std::move(on_branch)), on_break_(std::move(on_break)) {}

  void OnEvent(const TraceEvent& event) override;
  void OnEnd() override;

  uint64_t branches() const { return branches_; }
  uint64_t breaks() const { return breaks_; }

 private:
  struct Pending {
    PendingBranch branch;
    FlowBranchSite site;  // of the block the pending branch leaves
  };
  OnBranch on_branch_;
  OnBreak on_break_;
  std::unordered_map<int64_t, Pending> pending_;
  uint64_t branches_ = 0, breaks_ = 0;
};

}  // namespace ptprof
