#include "src/analyses/syscalls/syscall_tracker.h"

#include <array>

namespace ptprof::syscalls {

std::optional<std::string> SyscallFromHandler(const std::string& symbol, bool* strong) {
  static constexpr std::array<const char*, 3> kEntries = {"__x64_sys_", "__arm64_sys_",
                                                          "__ia32_sys_"};
  static constexpr std::array<const char*, 2> kHelpers = {"__do_sys_", "__se_sys_"};
  auto strip = [&symbol](const char* prefix) -> std::optional<std::string> {
    const std::string p = prefix;
    if (symbol.size() <= p.size() || symbol.compare(0, p.size(), p) != 0) return std::nullopt;
    std::string name = symbol.substr(p.size());
    if (size_t dot = name.find('.'); dot != std::string::npos) name.resize(dot);  // .constprop.0
    return name;
  };
  for (const char* prefix : kEntries)
    if (auto name = strip(prefix)) {
      if (strong) *strong = true;
      return name;
    }
  for (const char* prefix : kHelpers)
    if (auto name = strip(prefix)) {
      if (strong) *strong = false;
      return name;
    }
  return std::nullopt;
}

SyscallTracker::SyscallTracker(SyscallArch arch, UserNumberFinder user_number)
    : arch_(arch), user_number_(std::move(user_number)) {
  ListenToKernelEntriesOnly(true);  // until a syscall is open
}

void SyscallTracker::OnPush(const StackLane& lane, const StackFrame& frame) {
  Hear(lane, LaneHearing::Event::Kind::kPush, &frame, 0, 0, open_.empty());
  // Most pushes are user calls with no syscall open anywhere.
  auto it = open_.empty() ? open_.end() : open_.find(lane.lane);
  if (it != open_.end()) {
    Enter(it->second, lane.stack.size() - 1, frame.node->name);
    return;
  }
  if (frame.kind != FrameKind::kSyscall) return;
  Open open;
  SyscallInstance& s = open.instance;
  s.pid = lane.pid;
  s.tid = lane.tid;
  s.cpu = lane.cpu;
  s.syscall_ip = lane.block_last_ip;
  s.start_ns = frame.entry_ns;
  s.time_known = frame.entry_time_known;
  s.kernel_traced = frame.function != 0;  // the untraced placeholder has no entry address
  if (lane.stack.size() >= 2) {
    const StackFrame& caller = lane.stack[lane.stack.size() - 2];
    s.caller = caller.node->name;
    s.user_insns = frame.entry_insns - caller.entry_insns;
    if (caller.stand_in) open.fix.caller = lane.stack.size() - 2;  // the fold names it
  }
  open.fix.entry_insns = frame.entry_insns;
  open.fix.untimed = in_part_ && !frame.entry_time_known;
  if (user_number_)
    if (auto number = user_number_(lane.block_first_ip, lane.block_last_ip)) {
      s.number = *number;
      s.number_source = "user code";
      if (auto name = SyscallName(arch_, *number)) s.name = std::string(*name);
    }
  open.depth = lane.stack.size() - 1;
  CallTreeNode& entry = s.kernel_tree.root().Child(frame.node->name);
  ++entry.entries;
  open.path.push_back(&entry);
  open_.emplace(lane.lane, std::move(open));
  ListenToKernelEntriesOnly(false);
}

void SyscallTracker::NameFromHandler(Open& open, const std::string& function) {
  if (open.named_by_handler) return;
  bool strong = false;
  auto name = SyscallFromHandler(function, &strong);
  if (!name) return;
  SyscallInstance& s = open.instance;
  // The per-architecture entry settles it; an inner helper only names a syscall nothing named.
  if (!strong && s.number_source == "kernel path") return;
  s.name = *name;
  s.number_source = "kernel path";
  auto number = SyscallNumber(arch_, *name);
  s.number = number ? static_cast<int64_t>(*number) : -1;
  open.named_by_handler = strong;
}

void SyscallTracker::Enter(Open& open, size_t index, const std::string& function) {
  if (index < open.depth) return;
  CallTreeNode& node = open.path.back()->Child(function);
  ++node.entries;
  open.path.push_back(&node);
  NameFromHandler(open, function);
}

void SyscallTracker::AddCost(Open& open, size_t top, uint64_t insns, uint64_t ns) {
  if (top < open.depth) return;
  open.path.back()->self_insns += insns;
  open.path.back()->self_ns += ns;
}

bool SyscallTracker::Leave(Open& open, size_t index, uint64_t insns, uint64_t ns, bool time_known,
                           const StackFrame& syscall_frame) {
  if (index > open.depth) {
    open.path.pop_back();
    return false;
  }
  SyscallInstance& s = open.instance;
  s.kernel_insns = insns - syscall_frame.entry_insns;
  if (s.time_known && time_known && ns >= syscall_frame.entry_ns)
    s.latency_ns = ns - syscall_frame.entry_ns;
  s.kernel_tree.Finalize();
  return true;
}

void SyscallTracker::OnPop(const StackLane& lane, const StackFrame& frame) {
  Hear(lane, LaneHearing::Event::Kind::kPop, &frame, 0, 0, open_.empty());
  if (open_.empty()) return;
  auto it = open_.find(lane.lane);
  if (it == open_.end()) return;
  Open& open = it->second;
  if (!Leave(open, lane.stack.size() - 1, lane.insns, lane.ns, lane.time_known, frame)) return;
  if (in_part_) {
    open.fix.end_known = lane.time_known;
    open.fix.end_ns = lane.ns;
    open.fix.order = hearing_.heard();
    fixes_.push_back({lane.lane, open.fix});
  }
  instances_.push_back(std::move(open.instance));
  open_.erase(it);
  ListenToKernelEntriesOnly(open_.empty() && !hearing_.listening());
}

void SyscallTracker::OnCost(const StackLane& lane, uint64_t insns, uint64_t ns) {
  Hear(lane, LaneHearing::Event::Kind::kCost, nullptr, insns, ns, open_.empty());
  if (open_.empty()) return;
  auto it = open_.find(lane.lane);
  if (it != open_.end()) AddCost(it->second, lane.stack.size() - 1, insns, ns);
}

void SyscallTracker::OnReset(const StackLane& lane) {
  Hear(lane, LaneHearing::Event::Kind::kReset, nullptr, 0, 0, open_.empty());
  if (open_.erase(lane.lane)) ++counts_.cut_by_gap;
  ListenToKernelEntriesOnly(open_.empty() && !hearing_.listening());
}

void SyscallTracker::Finish() {
  counts_.open_at_end += open_.size();
  open_.clear();
  ListenToKernelEntriesOnly(true);
}

}  // namespace ptprof::syscalls
