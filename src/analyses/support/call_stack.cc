#include "src/analyses/support/call_stack.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <variant>

namespace ptprof {

const char* FrameKindName(FrameKind kind) {
  switch (kind) {
    case FrameKind::kStart: return "start";
    case FrameKind::kCaller: return "caller";
    case FrameKind::kCall: return "call";
    case FrameKind::kTailCall: return "tail_call";
    case FrameKind::kSyscall: return "syscall";
    case FrameKind::kInterrupt: return "interrupt";
    case FrameKind::kStandIn: return "stand_in";
  }
  return "?";
}

namespace {

std::string Hex(uint64_t value) {
  char text[32];
  std::snprintf(text, sizeof text, "0x%" PRIx64, value);
  return text;
}

}  // namespace

CallStackBuilder::CallStackBuilder(CallStackOptions options) : options_(std::move(options)) {
  if (!options_.time_of)
    options_.time_of = [](const EventHeader& h) -> std::optional<uint64_t> {
      if (h.time_ns == kUnknownTime) return std::nullopt;
      return h.time_ns;
    };
}

void CallStackObserver::ListenToKernelEntriesOnly(bool only) {
  if (only == kernel_entries_only_) return;
  kernel_entries_only_ = only;
  if (hearing_all_) *hearing_all_ += only ? -1 : 1;
}

void CallStackBuilder::AddObserver(CallStackObserver* observer) {
  observers_.push_back(observer);
  observer->hearing_all_ = &hearing_all_;
  if (!observer->kernel_entries_only_) ++hearing_all_;
}

std::pair<std::string, uint64_t> CallStackBuilder::FunctionAt(uint64_t ip) const {
  const Named& named = NameAt(ip);
  return {named.name, named.function};
}

const CallStackBuilder::NameSlot& CallStackBuilder::FillNameSlot(NameSlot& slot,
                                                                 uint64_t ip) const {
  const Named& named = LookUpName(ip);
  slot = NameSlot{ip, named.function, named.symbol, &named};
  return slot;
}

const CallStackBuilder::Named& CallStackBuilder::LookUpName(uint64_t ip) const {
  auto [it, added] = names_.try_emplace(ip);
  Named& named = it->second;
  if (!added) return named;
  const Symbol* symbol = options_.symbols ? options_.symbols->Find(ip) : nullptr;
  if (symbol) {
    named.name = options_.symbols->ShownName(*symbol);
    named.function = symbol->address;
    named.symbol = true;
  } else {
    named.name = Hex(ip);
    named.function = ip;
  }
  return named;
}

int32_t CallStackBuilder::LaneKey(const EventHeader& header) const {
  if (header.tid != kUnknownId) return header.tid;
  if (header.cpu == kUnknownId) return -1;
  auto it = cpu_tid_.find(header.cpu);
  if (it != cpu_tid_.end()) return it->second;
  return -(header.cpu + 2);
}

CallStackBuilder::Lane& CallStackBuilder::LaneFor(const EventHeader& header) {
  const int32_t key = LaneKey(header);
  auto [it, added] = lanes_.try_emplace(key);
  Lane& lane = it->second;
  if (added) {
    lane.view.lane = key;
    if (part_mode_ != PartMode::kWhole) {
      lane.part = std::make_unique<PartLane>();
      if (part_mode_ == PartMode::kFirstPart) {
        lane.part->phase = PartLane::Phase::kExact;
        lane.part->began_empty = true;
      }
    }
  }
  if (part_mode_ != PartMode::kWhole && header.tid == kUnknownId && header.cpu != kUnknownId &&
      !cpu_tid_.count(header.cpu) &&
      std::find(unmapped_cpus_.begin(), unmapped_cpus_.end(), header.cpu) == unmapped_cpus_.end())
    unmapped_cpus_.push_back(header.cpu);  // the thread there may be known before the part
  if (header.pid != kUnknownId) lane.view.pid = header.pid;
  if (header.tid != kUnknownId) lane.view.tid = header.tid;
  if (header.cpu != kUnknownId) lane.view.cpu = header.cpu;
  return lane;
}

void CallStackBuilder::OnEvent(const TraceEvent& event) {
  if (!failed_.empty()) return;  // a part that cannot be folded: no use going on
  if (part_mode_ != PartMode::kWhole && !std::holds_alternative<ExecBlock>(event.body) &&
      !std::holds_alternative<ContextSwitch>(event.body)) {
    // Before a part's lane has a block, its gaps and disables are the fold's to pass on.
    const bool gap = std::holds_alternative<TraceGap>(event.body);
    const auto* toggle = std::get_if<TraceToggle>(&event.body);
    if (gap || (toggle && (toggle->kind == TraceToggle::Kind::kDisabled ||
                           toggle->kind == TraceToggle::Kind::kAsyncDisabled))) {
      Lane& lane = LaneFor(event.header);
      PartLane& part = *lane.part;
      if (part.phase == PartLane::Phase::kAwaitingFirst) {
        part.lead.push_back({gap, options_.time_of(event.header)});
        if (gap) {  // the real lane is empty after it: the part knows the rest
          part.phase = PartLane::Phase::kExact;
          part.began_empty = true;
        }
        return;
      }
    }
  }
  if (const auto* block = std::get_if<ExecBlock>(&event.body)) {
    OnBlock(event.header, *block);
  } else if (std::holds_alternative<TraceGap>(event.body)) {
    Lane& lane = LaneFor(event.header);
    AttributePending(lane, options_.time_of(event.header));
    lane.pending.valid = false;
    Reset(lane);
  } else if (const auto* toggle = std::get_if<TraceToggle>(&event.body)) {
    if (toggle->kind == TraceToggle::Kind::kDisabled ||
        toggle->kind == TraceToggle::Kind::kAsyncDisabled) {
      Lane& lane = LaneFor(event.header);
      AttributePending(lane, options_.time_of(event.header));
    }
  } else if (const auto* context = std::get_if<ContextSwitch>(&event.body)) {
    if (event.header.tid == kUnknownId && event.header.cpu != kUnknownId &&
        context->next_tid != kUnknownId) {
      const std::optional<uint64_t> time = options_.time_of(event.header);
      if (part_mode_ != PartMode::kWhole && !cpu_tid_.count(event.header.cpu))
        lead_switches_.push_back({event.header.cpu, time});  // the thread it ends is the fold's
      else
        EndBlockOnCpu(event.header.cpu, time);
      cpu_tid_[event.header.cpu] = context->next_tid;
    }
  }
}

void CallStackBuilder::EndBlockOnCpu(int32_t cpu, const std::optional<uint64_t>& time) {
  EventHeader on;
  on.cpu = cpu;
  if (auto it = lanes_.find(LaneKey(on)); it != lanes_.end()) AttributePending(it->second, time);
}

void CallStackBuilder::OnBlock(const EventHeader& header, const ExecBlock& block) {
  TakeBlock(LaneFor(header), options_.time_of(header), block);
}

void CallStackBuilder::TakeBlock(Lane& lane, const std::optional<uint64_t>& now,
                                 const ExecBlock& block) {
  if (lane.part && lane.part->phase == PartLane::Phase::kAwaitingFirst)
    return BeginPartLane(lane, now, block);
  ++blocks_;
  AttributePending(lane, now);
  const std::optional<uint64_t> stopped =
      lane.pending.valid && lane.pending.stopped ? std::optional<uint64_t>(lane.pending.stop_ns)
                                                 : std::nullopt;
  if (now) {
    lane.view.ns = *now;
    lane.view.time_known = true;
  }
  if (lane.pending.valid) {
    pending_stop_ = stopped;
    lane.view.block_first_ip = lane.pending.first_ip;
    lane.view.block_last_ip = lane.pending.last_ip;
    Transition(lane, block.first_ip);
    pending_stop_.reset();
  }
  if (lane.view.stack.empty()) StartStack(lane, block.first_ip, FrameKind::kStart);

  lane.pending.Start(block, now);
}

void CallStackBuilder::AttributePending(Lane& lane, std::optional<uint64_t> until_ns) {
  Pending& p = lane.pending;
  if (!p.valid || p.cost_done || lane.view.stack.empty()) return;
  const uint64_t ns = p.CostNs(until_ns);
  AddCost(lane, *lane.view.stack.back().node, p.insns, ns);
  if (until_ns) {
    p.stopped = true;
    p.stop_ns = *until_ns;
  }
  p.cost_done = true;
}

void CallStackBuilder::Transition(Lane& lane, uint64_t target) {
  const Pending& p = lane.pending;
  switch (p.end) {
    case BlockEnd::kCall:
      if (!lane.view.stack.empty() && IsLocalCall(lane, NameAt(target), target)) {
        // A call to a label of the same function (a retpoline's `call 1f`, a get-pc thunk) is no
        // new frame; the return that consumes it is an indirect jump.
        CountLocalCall(lane, target);
        break;
      }
      Push(lane, FrameKind::kCall, target, p.fall_through);
      break;
    case BlockEnd::kReturn:
      ReturnTo(lane, target);
      break;
    case BlockEnd::kSyscall:
    case BlockEnd::kInterrupt:
      if (target == p.fall_through || target == p.last_ip) {
        // The kernel side is not in the trace: the flow resumed after the instruction.
        if (p.end != BlockEnd::kSyscall) break;
        ++repairs_.untraced_syscalls;
        const uint64_t resume_ns = lane.view.ns;
        if (pending_stop_) lane.view.ns = *pending_stop_;
        PushNamed(lane, FrameKind::kSyscall, "[kernel]", 0, p.fall_through);
        lane.view.ns = resume_ns;
        Pop(lane);
        break;
      }
      Push(lane, p.end == BlockEnd::kSyscall ? FrameKind::kSyscall : FrameKind::kInterrupt, target,
           p.fall_through);
      break;
    case BlockEnd::kSysret:
      KernelExitTo(lane, target, FrameKind::kSyscall);
      break;
    case BlockEnd::kIret:
      KernelExitTo(lane, target, FrameKind::kInterrupt);
      break;
    case BlockEnd::kJump:
    case BlockEnd::kFarBranch:
      JumpTo(lane, target);
      break;
    default:
      break;
  }
}

void CallStackBuilder::Push(Lane& lane, FrameKind kind, uint64_t target, uint64_t return_ip) {
  const Named& named = NameAt(target);
  if (kind != FrameKind::kCall) return PushNamed(lane, kind, named, return_ip);
  const auto [node, function] = CalleeOf(TopNode(lane), named, target);
  PushNode(lane, kind, *node, function, return_ip);
}

std::pair<CallTreeNode*, uint64_t> CallStackBuilder::CalleeOf(CallTreeNode& parent,
                                                              const Named& named,
                                                              uint64_t target) {
  if (options_.symbols && named.function != target) return {&parent.Child(Hex(target)), target};
  return {&NodeOf(parent, named), named.function};
}

CallTreeNode& CallStackBuilder::NodeOf(CallTreeNode& parent, const Named& named) {
  if (named.pushed_under != &parent) {
    named.pushed_as = &parent.Child(named.name);
    named.pushed_under = &parent;
  }
  return *named.pushed_as;
}

void CallStackBuilder::PushNamed(Lane& lane, FrameKind kind, const std::string& name,
                                 uint64_t function, uint64_t return_ip) {
  PushNode(lane, kind, TopNode(lane).Child(name), function, return_ip);
}

void CallStackBuilder::PushNamed(Lane& lane, FrameKind kind, const Named& named,
                                 uint64_t return_ip) {
  PushNode(lane, kind, NodeOf(TopNode(lane), named), named.function, return_ip);
}

void CallStackBuilder::PushNodeTelling(Lane& lane, FrameKind kind, CallTreeNode& node,
                                       uint64_t function, uint64_t return_ip) {
  ReportCost(lane);
  const StackFrame& frame = PlaceFrame(lane, kind, node, function, return_ip);
  if (IsKernelEntry(frame)) {
    for (CallStackObserver* observer : observers_) observer->OnPush(lane.view, frame);
  } else {
    TellHearingAll([&](CallStackObserver& observer) { observer.OnPush(lane.view, frame); });
  }
}

void CallStackBuilder::PopTelling(Lane& lane) {
  if (lane.view.stack.back().stand_in && ++lane.part->consumed + 1 >= kStandIns)
    Fail("a return went below the " + std::to_string(kStandIns) +
         " frames a part keeps of the stack before it");
  ReportCost(lane);
  TellHearingAll(
      [&lane](CallStackObserver& observer) { observer.OnPop(lane.view, lane.view.stack.back()); });
  lane.view.stack.pop_back();
}

void CallStackBuilder::PopTo(Lane& lane, size_t index) {
  while (lane.view.stack.size() > index) Pop(lane);
}

void CallStackBuilder::StartStack(Lane& lane, uint64_t ip, FrameKind kind) {
  const Named& named = NameAt(ip);
  if (kind == FrameKind::kStart) ++repairs_.stack_starts;
  PushNamed(lane, kind, named, 0);
}

void CallStackBuilder::Reset(Lane& lane) {
  ++repairs_.gap_resets;
  lane.local_calls = 0;
  ReportCost(lane);
  TellHearingAll([&lane](CallStackObserver& observer) { observer.OnReset(lane.view); });
  lane.view.stack.clear();
  if (InStandIns(lane)) {
    lane.part->phase = PartLane::Phase::kExact;
    lane.part->reset = true;
  }
}

void CallStackBuilder::ReturnTo(Lane& lane, uint64_t target) {
  if (InStandIns(lane) && !GuessForReturn(lane, target))
    return Fail("a return no frame the part knows of expects");
  std::vector<StackFrame>& stack = lane.view.stack;
  if (lane.local_calls > 0) {
    bool expected = false;
    for (const StackFrame& frame : stack) expected |= frame.return_ip == target && target != 0;
    if (!expected) {
      // The return consumes a local call (retpoline: `mov [rsp], rax; ret`): an indirect jump.
      --lane.local_calls;
      JumpTo(lane, target);
      return;
    }
  }
  for (size_t i = stack.size(); i-- > 0;) {
    if (stack[i].return_ip == 0 || stack[i].return_ip != target) continue;
    const size_t popped = stack.size() - i;
    if (popped > 1) {
      ++repairs_.unwinds;
      repairs_.frames_unwound += popped - 1;
    }
    PopTo(lane, i);
    if (stack.empty()) StartStack(lane, target, FrameKind::kCaller);
    return;
  }
  // No frame expects this address: a return into a function further up (its frame's return
  // address was changed), above the outermost frame, or somewhere else.
  const Named& named = NameAt(target);
  const std::string& name = named.name;
  const uint64_t function = named.function;
  for (size_t i = stack.size() - 1; i-- > 0;) {
    if (stack[i].function != function || !options_.symbols) continue;
    const size_t popped = stack.size() - (i + 1);
    if (popped > 1) {
      ++repairs_.unwinds;
      repairs_.frames_unwound += popped - 1;
    }
    PopTo(lane, i + 1);
    return;
  }
  if (stack.size() == 1) {
    ++repairs_.returns_above_start;
    Pop(lane);
    PushNamed(lane, FrameKind::kCaller, name, function, 0);
    return;
  }
  ++repairs_.unmatched_returns;
  if (IsKernelEntry(stack.back())) return;
  const StackFrame replaced = stack.back();
  Pop(lane);
  PushNamed(lane, replaced.kind, name, function, replaced.return_ip);
}

void CallStackBuilder::KernelExitTo(Lane& lane, uint64_t target, FrameKind kind) {
  if (InStandIns(lane) && !GuessForKernelExit(lane, target, kind))
    return Fail("a return from the kernel to no entry the part knows of");
  std::vector<StackFrame>& stack = lane.view.stack;
  auto kernel_entry = IsKernelEntry;
  // The entry frame expecting this return address (a syscall may also leave through iret), else
  // the nearest entry of the exit's kind.
  std::optional<size_t> to;
  for (size_t i = stack.size(); i-- > 0 && !to;)
    if (kernel_entry(stack[i]) && stack[i].return_ip == target) to = i;
  for (size_t i = stack.size(); i-- > 0 && !to;)
    if (stack[i].kind == kind) to = i;
  if (!to) {
    ++repairs_.unmatched_kernel_exits;
    // An exit of the other kind inside a syscall or interrupt (its entry was not seen): the
    // enclosing entry frame stays. Else the trace started inside the kernel: the stack restarts
    // where the exit goes.
    for (const StackFrame& frame : stack)
      if (kernel_entry(frame)) return;
    to = 0;
  }
  PopTo(lane, *to);
  if (stack.empty()) StartStack(lane, target, FrameKind::kCaller);
}

void CallStackBuilder::JumpTo(Lane& lane, uint64_t target) {
  if (JumpStays(lane, target)) return;
  if (InStandIns(lane)) GuessForJump(lane, target);
  std::vector<StackFrame>& stack = lane.view.stack;
  const Named& symbol = NameAt(target);
  if (symbol.function != target) {
    for (size_t i = stack.size() - 1; i-- > 0;) {
      if (stack[i].function != symbol.function) continue;
      // A jump back into a function further up (longjmp): the frames above it are gone.
      const size_t popped = stack.size() - (i + 1);
      ++repairs_.unwinds;
      repairs_.frames_unwound += popped - 1;
      PopTo(lane, i + 1);
      return;
    }
    return;  // into the middle of another symbol: a local label
  }
  // To a function's entry: a tail call.
  ++repairs_.tail_calls;
  const StackFrame replaced = stack.back();
  Pop(lane);
  PushNamed(lane, FrameKind::kTailCall, symbol, replaced.return_ip);
}

void CallStackBuilder::OnEnd() {
  if (part_mode_ != PartMode::kWhole) {
    // A part's last blocks take their cost when the next part's first ones come (Fold).
    for (auto& [key, lane] : lanes_) ReportCost(lane);
    return;
  }
  for (auto& [key, lane] : lanes_) {
    AttributePending(lane, std::nullopt);
    ReportCost(lane);
    lane.tree.Finalize();
  }
}

std::vector<int32_t> CallStackBuilder::Lanes() const {
  std::vector<int32_t> keys;
  for (const auto& [key, lane] : lanes_) keys.push_back(key);
  return keys;
}

const CallTree& CallStackBuilder::TreeOf(int32_t lane) const {
  auto it = lanes_.find(lane);
  return it == lanes_.end() ? empty_ : it->second.tree;
}

CallTree CallStackBuilder::Merged() const {
  CallTree merged;
  for (const auto& [key, lane] : lanes_) merged.Merge(lane.tree);
  merged.Finalize();
  return merged;
}

CallTree CallStackBuilder::TakeMerged() {
  if (lanes_.size() != 1) return Merged();
  CallTree tree = std::move(lanes_.begin()->second.tree);
  lanes_.begin()->second.tree = CallTree();
  tree.Finalize();
  return tree;
}

}  // namespace ptprof
