// SyscallTracker answers "which syscalls did the flow make, and what did each cost?": it watches a
// CallStackBuilder's syscall frames and records one SyscallInstance per syscall from the syscall
// instruction to the return to user space: its latency, the user instructions leading to it, the
// kernel instructions and the kernel call tree (when the kernel is traced), and the syscall's
// name and number, from the kernel path (the __x64_sys_NAME handler it reached) or from the user
// code before the syscall instruction (a number loaded into eax), else "unknown".
//
// It watches a builder that takes its stream in parts (syscall_tracker_parts.cc): a part's
// tracker keeps what it could not know (a caller among the part's stand-ins, a time not yet
// seen) for the fold, which refuses a part that began inside a syscall.
#pragma once

#include <cstdint>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include "sideband/syscall_table.h"
#include "src/analyses/support/call_stack.h"
#include "src/analyses/support/lane_hearing.h"

namespace ptprof::syscalls {

inline constexpr const char* kUnknownSyscall = "unknown";

struct SyscallInstance {
  std::string name = kUnknownSyscall;
  int64_t number = -1;          // -1: unknown
  std::string number_source;    // "kernel path", "user code" or "" (unknown)
  int32_t pid = -1, tid = -1, cpu = -1;
  uint64_t syscall_ip = 0;      // the syscall instruction
  std::string caller;           // the user function that executed it
  uint64_t start_ns = 0;        // when the syscall instruction was reached
  bool time_known = false;
  uint64_t latency_ns = 0;      // until the first user instruction after it
  uint64_t user_insns = 0;      // of the calling function from its entry up to the syscall
  uint64_t kernel_insns = 0;
  bool kernel_traced = false;
  CallTree kernel_tree;         // the kernel side; its root's child is the entry symbol
};

// Finds the number a syscall instruction at `syscall_ip` uses, from the code of the block
// [block_first_ip, syscall_ip]; nullopt when it cannot be known.
using UserNumberFinder = std::function<std::optional<uint32_t>(uint64_t block_first_ip,
                                                               uint64_t syscall_ip)>;

struct SyscallCounts {
  uint64_t cut_by_gap = 0;       // open when a gap reset the stack: dropped
  uint64_t open_at_end = 0;      // not returned when the trace ended: dropped
};

class SyscallTracker : public HearingObserver {
 public:
  SyscallTracker(SyscallArch arch, UserNumberFinder user_number);

  void OnPush(const StackLane& lane, const StackFrame& frame) override;
  void OnPop(const StackLane& lane, const StackFrame& frame) override;
  void OnCost(const StackLane& lane, uint64_t insns, uint64_t ns) override;
  void OnReset(const StackLane& lane) override;
  // Counts the syscalls still open (call after the builder's OnEnd).
  void Finish();

  std::unique_ptr<CallStackObserver> NewPart() const override;
  std::string Refusal(const CallStackObserver& part, const PartFold& lanes) const override;
  void Fold(CallStackObserver& part, const PartFold& lanes) override;

  std::vector<SyscallInstance>& instances() { return instances_; }
  const SyscallCounts& counts() const { return counts_; }
  // Syscalls open when a part began that the fold went on with from what the part heard.
  uint64_t gone_on() const { return gone_on_; }

 private:
  // In a part's tracker: what the fold completes of an instance. Its caller was a stand-in at
  // stack index `caller` (or none: SIZE_MAX); its syscall frame was entered at the part's
  // instruction count `entry_insns`; the part had no time yet when it began (`untimed`), and
  // it ended at `end_ns` if known.
  struct PartFix {
    size_t caller = SIZE_MAX;
    uint64_t entry_insns = 0;
    bool untimed = false;
    bool end_known = false;
    uint64_t end_ns = 0;
    uint64_t order = 0;  // what the part had heard when it ended: instances fold in this order
  };
  // Takes what a part heard of a lane into the syscall open there; the instance it closes (if)
  // goes to `closed` with its order.
  void GoOn(int32_t lane, const LaneHearing::Lane& heard, const PartLaneFold& fold,
            std::vector<std::pair<uint64_t, SyscallInstance>>& closed);
  struct Open {
    SyscallInstance instance;
    size_t depth = 0;                  // index of the syscall frame in the lane's stack
    std::vector<CallTreeNode*> path;   // kernel tree nodes of the frames from the syscall frame up
    bool named_by_handler = false;
    PartFix fix;
  };
  // The fold's completion of an instance of a part's lane.
  static void Complete(SyscallInstance& s, const PartFix& fix, const PartLaneFold& lane);
  void NameFromHandler(Open& open, const std::string& function);
  // What the frames of the lane of an open syscall do to it, by their stack index: a frame
  // entered above the syscall frame joins its kernel tree; the top's cost, there, goes to it; a
  // frame left above it leaves the tree, and the syscall frame left completes the instance
  // (Leave says so) from the lane's counters then.
  void Enter(Open& open, size_t index, const std::string& function);
  static void AddCost(Open& open, size_t top, uint64_t insns, uint64_t ns);
  static bool Leave(Open& open, size_t index, uint64_t insns, uint64_t ns, bool time_known,
                    const StackFrame& syscall_frame);

  SyscallArch arch_;
  UserNumberFinder user_number_;
  std::map<int32_t, Open> open_;
  std::vector<SyscallInstance> instances_;
  std::vector<std::pair<int32_t, PartFix>> fixes_;  // a part's: per instance, its lane and fix
  uint64_t gone_on_ = 0;
  SyscallCounts counts_;
};

// The syscall a kernel handler symbol implements: "getpid" for "__x64_sys_getpid" or
// "__do_sys_getpid"; nullopt for other symbols. `strong` says whether it is the per-architecture
// entry (__x64_sys_, __arm64_sys_, __ia32_sys_) rather than an inner helper.
std::optional<std::string> SyscallFromHandler(const std::string& symbol, bool* strong);

}  // namespace ptprof::syscalls
