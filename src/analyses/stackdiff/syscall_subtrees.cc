#include "src/analyses/stackdiff/syscall_subtrees.h"

#include <functional>

namespace ptprof::stackdiff {

std::string SyscallOfHandler(const std::string& function) {
  // Handler prefixes of x86-64, ia32 compat, x32, arm64 and generic kernels, longest first.
  static const char* const kPrefixes[] = {"__x64_sys_", "__ia32_sys_", "__x32_compat_sys_",
                                          "__ia32_compat_sys_", "__arm64_sys_",
                                          "__arm64_compat_sys_", "__se_sys_", "sys_"};
  for (const char* prefix : kPrefixes) {
    const std::string p(prefix);
    if (function.size() > p.size() && function.compare(0, p.size(), p) == 0)
      return function.substr(p.size());
  }
  return "";
}

void SyscallSubtrees::OnPush(const StackLane& lane, const StackFrame& frame) {
  const size_t index = lane.stack.size() - 1;
  auto it = open_.find(lane.lane);
  if (it == open_.end()) {
    if (frame.kind != FrameKind::kSyscall) return;
    Capture& capture = open_[lane.lane];
    capture.base = index;
    CallTreeNode& top = capture.tree.root().Child(frame.node->name);
    top.entries = 1;
    capture.nodes = {&top};
    ListenToKernelEntriesOnly(false);
    return;
  }
  Capture& capture = it->second;
  if (index <= capture.base) {  // the stack was rebuilt below the syscall: the instance is lost
    ++incomplete_;
    open_.erase(it);
    ListenToKernelEntriesOnly(open_.empty());
    return OnPush(lane, frame);
  }
  capture.nodes.resize(index - capture.base);
  CallTreeNode& node = capture.nodes.back()->Child(frame.node->name);
  ++node.entries;
  capture.nodes.push_back(&node);
}

void SyscallSubtrees::OnPop(const StackLane& lane, const StackFrame&) {
  auto it = open_.find(lane.lane);
  if (it == open_.end()) return;
  const size_t index = lane.stack.size() - 1;
  Capture& capture = it->second;
  if (index > capture.base) {
    capture.nodes.resize(index - capture.base);
    return;
  }
  if (index == capture.base) Finish(capture);
  else ++incomplete_;
  open_.erase(it);
  ListenToKernelEntriesOnly(open_.empty());
}

void SyscallSubtrees::OnCost(const StackLane& lane, uint64_t insns, uint64_t ns) {
  auto it = open_.find(lane.lane);
  if (it == open_.end()) return;
  Capture& capture = it->second;
  const size_t index = lane.stack.size() - 1;
  if (index < capture.base || index - capture.base >= capture.nodes.size()) return;
  CallTreeNode* node = capture.nodes[index - capture.base];
  node->self_insns += insns;
  node->self_ns += ns;
}

void SyscallSubtrees::OnReset(const StackLane& lane) {
  if (open_.erase(lane.lane)) ++incomplete_;
  ListenToKernelEntriesOnly(open_.empty());
}

void SyscallSubtrees::Finish(Capture& capture) {
  // The instance is named after the first handler in its tree, outermost first.
  std::string name;
  std::function<void(const CallTreeNode&)> find = [&](const CallTreeNode& node) {
    for (const auto& child : node.children) {
      if (!name.empty()) return;
      name = SyscallOfHandler(child->name);
    }
    for (const auto& child : node.children) {
      if (!name.empty()) return;
      find(*child);
    }
  };
  find(capture.tree.root());
  ++seen_[name.empty() ? "?" : name];
  if (name != wanted_) return;
  ++instances_;
  capture.tree.Finalize();
  merged_.Merge(capture.tree);
}

CallTree SyscallSubtrees::Tree() const {
  CallTree copy;
  copy.Merge(merged_);
  return copy;
}

}  // namespace ptprof::stackdiff
