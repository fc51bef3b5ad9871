// CallStackBuilder in parts (PartedSink): each part of the stream goes to a builder of its own on
// the thread that decoded it, and the parts are folded in stream order.
//
// A part does not know the stack its lanes had when it began. A lane of a part therefore begins
// on stand-ins: kStandIns frames whose nodes are the part's own, with marks for a return address
// and a function that no real one equals, and a kind not read yet. The part runs the same rules
// on them as on any frame; where a rule reads a stand-in it guesses and keeps the guess:
//  - a return that no frame of the part expects returns to the topmost stand-in's return address
//    (but right where the part's open local call went, as in a retpoline, no real frame expects
//    it: it consumes the call) (GuessForReturn);
//  - whether a stand-in runs function F, the one question the rules ask of a frame's function:
//    yes if the code it executes is in F; once yes, it runs F and no other (GuessRuns);
//  - a stand-in a jump leaves is a kernel entry if its code is in the kernel's entry text, else
//    none (GuessEntryStays); a jump into the middle of another function finds no stand-in
//    running that one (the longjmp case) (GuessForJump);
//  - a kernel exit no frame of the part expects returns to the topmost stand-in, a syscall or
//    interrupt frame (GuessForKernelExit).
// The lane's first block is kept aside: its transition from the block before it (the previous
// part's last) is the fold's to make. The fold (Refusal) first makes it on a copy of the real
// lane and checks every guess against the frames it then has; Fold makes it for real, merges each
// stand-in's node into the real frame's, and puts the part's frames on the real stack. Where a
// guess was wrong, the part is not folded and its stretch of the stream is decoded again into this
// builder directly (PartedSink::Refusal), so the result is always that of one stream.
#include <algorithm>
#include <string>

#include "src/analyses/support/call_stack.h"

namespace ptprof {

namespace {

bool HasContent(const CallTreeNode& node) {
  return node.entries || node.self_insns || node.self_ns || !node.children.empty();
}

}  // namespace

CallStackBuilder::EntryText CallStackBuilder::FindEntryText() const {
  if (!options_.symbols) return {};
  const Symbol* begin = options_.symbols->FindNamed("__entry_text_start");
  const Symbol* end = options_.symbols->FindNamed("__entry_text_end");
  if (!begin || !end || end->address <= begin->address) return {};
  return {begin->address, end->address};
}

std::unique_ptr<CallStackBuilder> CallStackBuilder::MakePart(PartMode mode) const {
  auto part = std::make_unique<CallStackBuilder>(options_);
  part->part_mode_ = mode;
  std::call_once(entry_text_once_, [this] { found_entry_text_ = FindEntryText(); });
  part->entry_text_ = found_entry_text_;
  for (const CallStackObserver* observer : observers_) {
    part->owned_observers_.push_back(observer->NewPart());
    part->AddObserver(part->owned_observers_.back().get());
  }
  return part;
}

std::unique_ptr<EventSink> CallStackBuilder::NewPart() const { return MakePart(PartMode::kPart); }

std::unique_ptr<EventSink> CallStackBuilder::NewFirstPart() const {
  return MakePart(PartMode::kFirstPart);
}

bool CallStackBuilder::TakesParts() const {
  for (const CallStackObserver* observer : observers_)
    if (!observer->NewPart()) return false;
  return true;
}

void CallStackBuilder::BeginPartLane(Lane& lane, const std::optional<uint64_t>& now,
                                     const ExecBlock& block) {
  PartLane& part = *lane.part;
  part.phase = PartLane::Phase::kStandIns;
  part.have_first = true;
  part.first_now = now;
  part.first = block;
  part.nodes.resize(kStandIns);
  part.guesses.resize(kStandIns);
  for (size_t k = 0; k + 1 < kStandIns; ++k) part.nodes[k].parent = &part.nodes[k + 1];
  std::vector<StackFrame>& stack = lane.view.stack;
  stack.clear();
  for (size_t i = 0; i < kStandIns; ++i) {
    const size_t k = kStandIns - 1 - i;
    StackFrame& frame = stack.emplace_back();
    frame.node = &part.nodes[k];
    frame.kind = FrameKind::kStandIn;
    frame.stand_in = true;
    frame.function = kStandInFunction | k;
    frame.return_ip = kStandInReturn | k;
  }
  if (now) {
    lane.view.ns = *now;
    lane.view.time_known = true;
  }
  lane.pending.Start(block, now);
  for (CallStackObserver* observer : observers_) observer->OnPartLaneBegin(lane.view);
}

bool CallStackBuilder::GuessRuns(Lane& lane, uint64_t function) {
  StackFrame& top = lane.view.stack.back();
  StandInGuess& guess = lane.part->guesses[kStandIns - lane.view.stack.size()];
  for (const auto& [known, runs] : guess.runs)
    if (known == function) return runs;  // asked before: only no, or it would be known
  const bool runs = NameAt(lane.pending.first_ip).function == function;
  guess.runs.push_back({function, runs});
  if (runs) top.function = function;  // known from now on: what the rules read of it
  return runs;
}

bool CallStackBuilder::GuessForReturn(Lane& lane, uint64_t target) {
  std::vector<StackFrame>& stack = lane.view.stack;
  PartLane& part = *lane.part;
  for (size_t i = stack.size(); i-- > 0;) {
    StackFrame& frame = stack[i];
    if (frame.return_ip == target && target != 0) return true;  // ReturnTo pops to it
    if (!IsStandInReturn(frame.return_ip)) continue;
    // The topmost frame returning where a stand-in does (the stand-in, or a frame that replaced
    // it by a tail call); every frame below it is a stand-in.
    const size_t k = frame.return_ip & 0xffff;
    if (lane.local_calls > 0 && lane.pending.first_ip == part.local_target) {
      // Right where the part's last local call went (a retpoline: `call 1f; 1: mov %rax,
      // (%rsp); ret`): the return of that call, which ReturnTo takes as one unless some frame
      // expects it. Elsewhere (a get-pc call never returns), a stand-in's return.
      part.no_return.push_back({k, target});
      return true;
    }
    frame.return_ip = target;
    part.guesses[k].return_ip = target;
    part.guesses[k].return_guessed = true;
    return true;
  }
  return false;
}

bool CallStackBuilder::GuessForKernelExit(Lane& lane, uint64_t target, FrameKind kind) {
  std::vector<StackFrame>& stack = lane.view.stack;
  for (size_t i = stack.size(); i-- > 0;) {
    StackFrame& frame = stack[i];
    if (!frame.stand_in) {
      if (IsKernelEntry(frame) && frame.return_ip == target) return true;  // KernelExitTo's
      continue;
    }
    // The topmost stand-in: the entry the exit returns to.
    StandInGuess& guess = lane.part->guesses[kStandIns - 1 - i];
    // KernelExitTo takes the first entry expecting the target, of either kind.
    if (guess.kind == StandInGuess::Kind::kNotEntry) return false;
    guess.kind = StandInGuess::Kind::kEntry;
    frame.kind = kind;  // as the exit says (observers see it popped)
    if (IsStandInReturn(frame.return_ip)) {
      frame.return_ip = target;
      guess.return_ip = target;
      guess.return_guessed = true;
    }
    return frame.return_ip == target;
  }
  return false;
}

bool CallStackBuilder::GuessEntryStays(Lane& lane) {
  StackFrame& top = lane.view.stack.back();
  StandInGuess& guess = lane.part->guesses[kStandIns - lane.view.stack.size()];
  if (guess.kind == StandInGuess::Kind::kUnread) {
    const uint64_t code = lane.pending.first_ip;
    if (code >= entry_text_.begin && code < entry_text_.end) {
      guess.kind = StandInGuess::Kind::kEntry;
      top.kind = FrameKind::kSyscall;  // a kernel entry, for the rules
    } else {
      guess.kind = StandInGuess::Kind::kNotEntry;
      top.kind = FrameKind::kCall;  // no kernel entry, for the rules
    }
  }
  return guess.kind == StandInGuess::Kind::kEntry;
}

void CallStackBuilder::GuessForJump(Lane& lane, uint64_t target) {
  std::vector<StackFrame>& stack = lane.view.stack;
  const Named& named = NameAt(target);
  if (named.function == target) return;  // a tail call: no frame below the top is read
  // JumpTo looks below the top for a frame running the target's function: a stand-in does only
  // if it was seen to (the longjmp case is rare).
  for (size_t i = stack.size() - 1; i-- > 0;) {
    const StackFrame& frame = stack[i];
    if (frame.function == named.function) return;  // JumpTo pops to it
    if (!frame.stand_in) continue;
    // None of the stand-ins from here down runs it, whose functions the part has not seen (or
    // has, for this one, and it is another).
    const size_t k = kStandIns - 1 - i;
    lane.part->no_function.push_back({IsStandInFunction(frame.function) ? k : k + 1,
                                      named.function});
    return;
  }
}

void CallStackBuilder::TakeLead(Lane& lane, const PartLane& part) {
  for (const PartLane::Lead& lead : part.lead) {
    AttributePending(lane, lead.time);
    if (lead.gap) {
      lane.pending.valid = false;
      Reset(lane);
    }
  }
  if (part.have_first) TakeBlock(lane, part.first_now, part.first);
}

std::string CallStackBuilder::Mismatch(const PartLane& part,
                                       const std::vector<StackFrame>& stack) const {
  if (!part.have_first) return {};
  const size_t n = stack.size();
  if (part.consumed > n)
    return "it returned from " + std::to_string(part.consumed) + " frames of a stack that had " +
           std::to_string(n);
  auto real = [&](size_t k) -> const StackFrame& { return stack[n - 1 - k]; };
  for (size_t k = 0; k < kStandIns; ++k) {
    const StandInGuess& guess = part.guesses[k];
    const bool used = k < part.consumed || !guess.runs.empty() || guess.return_guessed ||
                      guess.kind != StandInGuess::Kind::kUnread || HasContent(part.nodes[k]);
    if (!used) continue;
    if (k >= n) return "it used more frames of the stack before it than there were";
    const StackFrame& frame = real(k);
    for (const auto& [function, runs] : guess.runs)
      if ((frame.function == function) != runs)
        return "it guessed wrong which function a frame before it runs";
    if (guess.return_guessed && (frame.return_ip == 0 || frame.return_ip != guess.return_ip))
      return "a frame before it expects a return elsewhere than it guessed";
    if (guess.kind != StandInGuess::Kind::kUnread &&
        IsKernelEntry(frame) != (guess.kind == StandInGuess::Kind::kEntry))
      return "it guessed wrong whether a frame before it is a kernel entry";
  }
  for (const PartLane::Absent& absent : part.no_function)
    for (size_t k = absent.first; k < n; ++k)
      if (real(k).function == absent.value)
        return "a jump went back into a function it did not know was running";
  for (const PartLane::Absent& absent : part.no_return)
    for (size_t k = absent.first; k < n; ++k)
      if (real(k).return_ip == absent.value)
        return "a frame before it expected a return it took for a local call's";
  return {};
}

std::string CallStackBuilder::Refusal(const EventSink& part_sink) const {
  const auto& part = static_cast<const CallStackBuilder&>(part_sink);
  if (!part.failed_.empty()) return part.failed_;
  for (int32_t cpu : part.unmapped_cpus_)
    if (cpu_tid_.count(cpu))
      return "it began before it knew the thread on CPU " + std::to_string(cpu);
  PartFold fold;
  std::deque<CallTreeNode> chain;  // declared first, destroyed last
  std::unique_ptr<CallStackBuilder> scratch;
  for (const auto& [key, part_lane] : part.lanes_) {
    const PartLane& lanes_part = *part_lane.part;
    auto it = lanes_.find(key);
    if (part.part_mode_ == PartMode::kFirstPart) {
      if (it != lanes_.end())  // it took the lane to begin there
        return "its thread " + std::to_string(key) + " ran before the decode";
      fold[key] = PartLaneFold{};
      continue;
    }
    // The real lane's first moves on a copy, with nodes of its own (named as the real ones),
    // in a builder of its own: nothing real changes. (One builder for all the lanes, each a
    // lane of its own in it, all its nodes alive until it is done: its caches point at them.)
    if (!scratch) scratch = std::make_unique<CallStackBuilder>(options_);
    Lane& trial = scratch->lanes_[key];
    trial.view.lane = key;
    if (it != lanes_.end()) {
      trial.view = it->second.view;
      trial.pending = it->second.pending;
      trial.local_calls = it->second.local_calls;
      CallTreeNode* parent = &trial.tree.root();
      for (StackFrame& frame : trial.view.stack) {
        CallTreeNode& node = chain.emplace_back();
        node.name = frame.node->name;
        node.parent = parent;
        frame.node = parent = &node;
      }
    }
    scratch->TakeLead(trial, lanes_part);
    if (std::string why = Mismatch(lanes_part, trial.view.stack); !why.empty()) return why;
    fold[key] = FoldOf(trial, lanes_part);
  }
  for (size_t i = 0; i < observers_.size(); ++i)
    if (std::string why = observers_[i]->Refusal(*part.owned_observers_[i], fold); !why.empty())
      return why;
  return {};
}

PartLaneFold CallStackBuilder::FoldOf(const Lane& real, const PartLane& part) {
  PartLaneFold fold;
  fold.before = real.view.stack;
  fold.stand_ins = part.have_first ? kStandIns : 0;
  fold.reset = part.reset || part.began_empty;
  fold.insns = real.view.insns;
  fold.ns = real.view.ns;
  fold.time_known = real.view.time_known;
  return fold;
}

PartLaneFold CallStackBuilder::Graft(Lane& real, Lane& part_lane) {
  PartLane& part = *part_lane.part;
  PartLaneFold fold = FoldOf(real, part);
  if (part.phase == PartLane::Phase::kAwaitingFirst) return fold;  // no block: its lead was all
  ReportCost(real);  // the real top frame's cost so far, before its stack changes under observers

  std::vector<StackFrame>& stack = real.view.stack;
  const size_t n = stack.size();
  if (fold.stand_ins)
    for (size_t k = 0; k < kStandIns; ++k)
      if (HasContent(part.nodes[k])) MergeNode(*stack[n - 1 - k].node, part.nodes[k]);
  MergeNode(real.tree.root(), part_lane.tree.root());
  if (fold.reset)
    stack.clear();
  else
    stack.resize(n - part.consumed);
  for (const StackFrame& frame : part_lane.view.stack) {
    if (frame.stand_in) continue;
    StackFrame& put = stack.emplace_back(frame);
    CallTreeNode& parent =
        stack.size() > 1 ? *stack[stack.size() - 2].node : real.tree.root();
    put.node = const_cast<CallTreeNode*>(parent.FindChild(frame.node->name));
    if (IsStandInReturn(put.return_ip))  // a tail call's frame, in the place of stand-in k
      put.return_ip = fold.before[n - 1 - (put.return_ip & 0xffff)].return_ip;
    put.entry_insns += fold.insns;
    if (!put.entry_time_known) {
      put.entry_ns = fold.ns;
      put.entry_time_known = fold.time_known;
    }
  }
  real.view.insns += part_lane.view.insns;
  if (part_lane.view.time_known) {
    real.view.ns = part_lane.view.ns;
    real.view.time_known = true;
  }
  real.view.block_first_ip = part_lane.view.block_first_ip;
  real.view.block_last_ip = part_lane.view.block_last_ip;
  real.pending = part_lane.pending;
  real.local_calls = fold.reset ? part_lane.local_calls : real.local_calls + part_lane.local_calls;
  return fold;
}

void CallStackBuilder::Fold(std::unique_ptr<EventSink> part_sink) {
  auto& part = static_cast<CallStackBuilder&>(*part_sink);
  for (const LeadSwitch& lead : part.lead_switches_) EndBlockOnCpu(lead.cpu, lead.time);
  PartFold fold;
  for (auto& [key, part_lane] : part.lanes_) {
    if (part.part_mode_ == PartMode::kFirstPart) {
      // The part knew the lane from its beginning: it is the real one.
      part_lane.part.reset();
      lanes_.emplace(key, std::move(part_lane));
      fold[key] = PartLaneFold{};
      continue;
    }
    auto [it, added] = lanes_.try_emplace(key);
    Lane& real = it->second;
    if (added) real.view.lane = key;
    for (int32_t StackLane::*id : {&StackLane::pid, &StackLane::tid, &StackLane::cpu})
      if (part_lane.view.*id != -1) real.view.*id = part_lane.view.*id;
    TakeLead(real, *part_lane.part);
    fold[key] = Graft(real, part_lane);
  }
  for (const auto& [cpu, tid] : part.cpu_tid_) cpu_tid_[cpu] = tid;
  blocks_ += part.blocks_;
  repairs_ += part.repairs_;
  for (size_t i = 0; i < observers_.size(); ++i)
    observers_[i]->Fold(*part.owned_observers_[i], fold);
}

}  // namespace ptprof
