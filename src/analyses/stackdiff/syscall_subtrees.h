#pragma once
// SyscallSubtrees answers "what did the kernel execute for each instance of this syscall?" while a
// CallStackBuilder runs: it watches every syscall frame (a syscall instruction into the kernel
// entry) from its push to its pop, copies what runs above it into a tree of its own, names the
// instance after the syscall handler it reached (__x64_sys_NAME, __arm64_sys_NAME, sys_NAME, ...)
// and merges the trees of the instances of the wanted syscall into one. Instances cut by a gap or
// still open at the end are counted, not merged.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "src/analyses/support/call_stack.h"

namespace ptprof::stackdiff {

// The syscall a handler function implements ("getpid" for "__x64_sys_getpid"), or "".
std::string SyscallOfHandler(const std::string& function);

class SyscallSubtrees : public CallStackObserver {
 public:
  explicit SyscallSubtrees(std::string wanted) : wanted_(std::move(wanted)) {
    ListenToKernelEntriesOnly(true);  // until a syscall is open
  }

  void OnPush(const StackLane& lane, const StackFrame& frame) override;
  void OnPop(const StackLane& lane, const StackFrame& frame) override;
  void OnCost(const StackLane& lane, uint64_t insns, uint64_t ns) override;
  void OnReset(const StackLane& lane) override;

  // The merged trees of the wanted syscall's complete instances (top level: the kernel entry).
  CallTree Tree() const;
  uint64_t instances() const { return instances_; }
  // Complete instances per syscall name ("?" when no handler was recognised).
  const std::map<std::string, uint64_t>& seen() const { return seen_; }
  uint64_t incomplete() const { return incomplete_; }

 private:
  struct Capture {
    size_t base = 0;                     // stack index of the syscall frame
    CallTree tree;
    std::vector<CallTreeNode*> nodes;    // the capture's node for stack[base], stack[base+1], ...
  };

  void Finish(Capture& capture);

  std::string wanted_;
  std::map<int32_t, Capture> open_;      // per lane
  CallTree merged_;
  uint64_t instances_ = 0, incomplete_ = 0;
  std::map<std::string, uint64_t> seen_;
};

}  // namespace ptprof::stackdiff
