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

bool SyscallSubtrees::Apply(std::map<int32_t, Capture>::iterator it, LaneHearing::Event::Kind kind,
                            size_t index, std::string_view function, uint64_t insns, uint64_t ns,
                            uint64_t order) {
  Capture& capture = it->second;
  switch (kind) {
    case LaneHearing::Event::Kind::kPush: {
      if (index <= capture.base) {
        ++incomplete_;
        break;
      }
      capture.nodes.resize(index - capture.base);
      CallTreeNode& node = capture.nodes.back()->Child(function);
      ++node.entries;
      capture.nodes.push_back(&node);
      return true;
    }
    case LaneHearing::Event::Kind::kCost:
      if (index >= capture.base && index - capture.base < capture.nodes.size()) {
        CallTreeNode* node = capture.nodes[index - capture.base];
        node->self_insns += insns;
        node->self_ns += ns;
      }
      return true;
    case LaneHearing::Event::Kind::kPop:
      if (index > capture.base) {
        capture.nodes.resize(index - capture.base);
        return true;
      }
      if (index == capture.base) Finish(capture, order);
      else ++incomplete_;
      break;
    case LaneHearing::Event::Kind::kReset:
      ++incomplete_;
      break;
  }
  open_.erase(it);
  ListenToKernelEntriesOnly(open_.empty() && !hearing_.listening());
  return false;
}

void SyscallSubtrees::OnPush(const StackLane& lane, const StackFrame& frame) {
  Hear(lane, LaneHearing::Event::Kind::kPush, &frame, 0, 0, open_.empty());
  const size_t index = lane.stack.size() - 1;
  auto it = open_.find(lane.lane);
  if (it != open_.end() &&
      Apply(it, LaneHearing::Event::Kind::kPush, index, frame.node->name, 0, 0, 0))
    return;
  if (frame.kind != FrameKind::kSyscall) return;
  Capture& capture = open_[lane.lane];
  capture.base = index;
  CallTreeNode& top = capture.tree.root().Child(frame.node->name);
  top.entries = 1;
  capture.nodes = {&top};
  ListenToKernelEntriesOnly(false);
}

void SyscallSubtrees::OnPop(const StackLane& lane, const StackFrame& frame) {
  Hear(lane, LaneHearing::Event::Kind::kPop, &frame, 0, 0, open_.empty());
  auto it = open_.find(lane.lane);
  if (it != open_.end())
    Apply(it, LaneHearing::Event::Kind::kPop, lane.stack.size() - 1, {}, 0, 0, hearing_.heard());
}

void SyscallSubtrees::OnCost(const StackLane& lane, uint64_t insns, uint64_t ns) {
  Hear(lane, LaneHearing::Event::Kind::kCost, nullptr, insns, ns, open_.empty());
  auto it = open_.find(lane.lane);
  if (it != open_.end())
    Apply(it, LaneHearing::Event::Kind::kCost, lane.stack.size() - 1, {}, insns, ns, 0);
}

void SyscallSubtrees::OnReset(const StackLane& lane) {
  Hear(lane, LaneHearing::Event::Kind::kReset, nullptr, 0, 0, open_.empty());
  auto it = open_.find(lane.lane);
  if (it != open_.end()) Apply(it, LaneHearing::Event::Kind::kReset, 0, {}, 0, 0, 0);
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
