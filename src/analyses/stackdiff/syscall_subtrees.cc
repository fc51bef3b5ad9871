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

bool SyscallSubtrees::Enter(Capture& capture, size_t index, const std::string& function) {
  if (index <= capture.base) return false;
  capture.nodes.resize(index - capture.base);
  CallTreeNode& node = capture.nodes.back()->Child(function);
  ++node.entries;
  capture.nodes.push_back(&node);
  return true;
}

void SyscallSubtrees::AddCost(Capture& capture, size_t top, uint64_t insns, uint64_t ns) {
  if (top < capture.base || top - capture.base >= capture.nodes.size()) return;
  CallTreeNode* node = capture.nodes[top - capture.base];
  node->self_insns += insns;
  node->self_ns += ns;
}

SyscallSubtrees::Left SyscallSubtrees::Leave(Capture& capture, size_t index) {
  if (index > capture.base) {
    capture.nodes.resize(index - capture.base);
    return Left::kAbove;
  }
  return index == capture.base ? Left::kDone : Left::kLost;
}

void SyscallSubtrees::OnPush(const StackLane& lane, const StackFrame& frame) {
  if (in_part_) Hear(lane, LaneHearing::Event::Kind::kPush, &frame, 0, 0);
  const size_t index = lane.stack.size() - 1;
  auto it = open_.find(lane.lane);
  if (it != open_.end()) {
    if (Enter(it->second, index, frame.node->name)) return;
    ++incomplete_;  // the stack was rebuilt below the syscall: the instance is lost
    open_.erase(it);
    ListenToKernelEntriesOnly(open_.empty() && !hearing_.listening());
  }
  if (frame.kind != FrameKind::kSyscall) return;
  Capture& capture = open_[lane.lane];
  capture.base = index;
  CallTreeNode& top = capture.tree.root().Child(frame.node->name);
  top.entries = 1;
  capture.nodes = {&top};
  ListenToKernelEntriesOnly(false);
}

void SyscallSubtrees::OnPop(const StackLane& lane, const StackFrame& frame) {
  if (in_part_) Hear(lane, LaneHearing::Event::Kind::kPop, &frame, 0, 0);
  auto it = open_.find(lane.lane);
  if (it == open_.end()) return;
  const Left left = Leave(it->second, lane.stack.size() - 1);
  if (left == Left::kAbove) return;
  if (left == Left::kDone) Finish(it->second, hearing_.heard());
  else ++incomplete_;
  open_.erase(it);
  ListenToKernelEntriesOnly(open_.empty() && !hearing_.listening());
}

void SyscallSubtrees::OnCost(const StackLane& lane, uint64_t insns, uint64_t ns) {
  if (in_part_) Hear(lane, LaneHearing::Event::Kind::kCost, nullptr, insns, ns);
  auto it = open_.find(lane.lane);
  if (it != open_.end()) AddCost(it->second, lane.stack.size() - 1, insns, ns);
}

void SyscallSubtrees::OnReset(const StackLane& lane) {
  if (in_part_) Hear(lane, LaneHearing::Event::Kind::kReset, nullptr, 0, 0);
  if (open_.erase(lane.lane)) ++incomplete_;
  ListenToKernelEntriesOnly(open_.empty() && !hearing_.listening());
}

void SyscallSubtrees::Finish(Capture& capture, uint64_t order) {
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
  if (keep_aside_) aside_.emplace_back(order, std::move(capture.tree));
  else merged_.Merge(capture.tree);
}

CallTree SyscallSubtrees::Tree() const {
  CallTree copy;
  copy.Merge(merged_);
  return copy;
}

}  // namespace ptprof::stackdiff
