#pragma once
// SyscallSubtrees answers "what did the kernel execute for each instance of this syscall?" while a
// CallStackBuilder runs: it watches every syscall frame (a syscall instruction into the kernel
// entry) from its push to its pop, copies what runs above it into a tree of its own, names the
// instance after the syscall handler it reached (__x64_sys_NAME, __arm64_sys_NAME, sys_NAME, ...)
// and merges the trees of the instances of the wanted syscall into one. Instances cut by a gap or
// still open at the end are counted, not merged.
//
// It watches a builder that takes its stream in parts (syscall_subtrees_parts.cc): a part's
// instances are merged at the fold in the order they closed; one still open at the part's end goes
// on in the real observer; one open before the part goes on with what the part heard of its lane
// (LaneHearing), and a part that did not hear it through is refused.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "src/analyses/support/call_stack.h"
#include "src/analyses/support/lane_hearing.h"

namespace ptprof::stackdiff {

// The syscall a handler function implements ("getpid" for "__x64_sys_getpid"), or "".
std::string SyscallOfHandler(const std::string& function);

class SyscallSubtrees : public HearingObserver {
 public:
  explicit SyscallSubtrees(std::string wanted) : wanted_(std::move(wanted)) {
    ListenToKernelEntriesOnly(true);  // until a syscall is open
  }

  void OnPush(const StackLane& lane, const StackFrame& frame) override;
  void OnPop(const StackLane& lane, const StackFrame& frame) override;
  void OnCost(const StackLane& lane, uint64_t insns, uint64_t ns) override;
  void OnReset(const StackLane& lane) override;

  std::unique_ptr<CallStackObserver> NewPart() const override;
  std::string Refusal(const CallStackObserver& part, const PartFold& lanes) const override;
  void Fold(CallStackObserver& part, const PartFold& lanes) override;

  // The merged trees of the wanted syscall's complete instances (top level: the kernel entry).
  CallTree Tree() const;
  uint64_t instances() const { return instances_; }
  // Complete instances per syscall name ("?" when no handler was recognised).
  const std::map<std::string, uint64_t>& seen() const { return seen_; }
  uint64_t incomplete() const { return incomplete_; }
  // Captures open when a part began that the fold went on with from what the part heard.
  uint64_t gone_on() const { return gone_on_; }

 private:
  struct Capture {
    size_t base = 0;                     // stack index of the syscall frame
    CallTree tree;
    std::vector<CallTreeNode*> nodes;    // the capture's node for stack[base], stack[base+1], ...
  };

  // What an event of a lane with an open capture does to it, by stack index: a frame entered
  // above the syscall frame joins the capture's tree (one entered at or below it: the stack was
  // rebuilt, the instance is lost); the top's cost there goes to it; a frame left above it
  // leaves the tree, the syscall frame left completes the instance (`order` orders it among
  // those kept aside), one left below it or a gap loses it. False when the capture ended (it is
  // then erased).
  bool Apply(std::map<int32_t, Capture>::iterator it, LaneHearing::Event::Kind kind, size_t index,
             std::string_view function, uint64_t insns, uint64_t ns, uint64_t order);
  // Names a complete instance and merges its tree if it is the wanted syscall; in a part, or
  // while a fold goes on with what a part heard, keeps it aside with `order` instead.
  void Finish(Capture& capture, uint64_t order);
  // The fold: goes on with the capture open on `lane` from what the part heard of it.
  void GoOn(int32_t lane, const LaneHearing::Lane& heard, const PartLaneFold& fold);

  std::string wanted_;
  std::map<int32_t, Capture> open_;      // per lane
  CallTree merged_;
  uint64_t instances_ = 0, incomplete_ = 0;
  std::map<std::string, uint64_t> seen_;
  uint64_t gone_on_ = 0;
  // Complete instances of the wanted syscall kept aside (a part's, or a fold's), with their order.
  bool keep_aside_ = false;
  std::vector<std::pair<uint64_t, CallTree>> aside_;
};

}  // namespace ptprof::stackdiff
