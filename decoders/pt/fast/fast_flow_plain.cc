// FastFlowDecoder's plain walk: the blocks walked while no event waits and tracing is on (most
// of them), one code block and the branch that ends it at a time, and Run's inner loop, which
// passes such blocks and whole TNT runs (fast/tnt_runs.h) to the model directly, the state moving
// past them exactly as the plain walk would have moved it.
#include "decoders/pt/fast/fast_flow.h"

#include "decoders/pt/flow_config.h"
#include "decoders/pt/flow_events.h"

namespace ptprof::pt::fast {

// Next when no event waits and tracing is on (most blocks): Proceed without its questions.
int FastFlowDecoder::NextPlain(Walk& walk) {
  walk.ninsn = 0;
  walk.ip = ip_;
  walk.mode = mode_;
  walk.speculative = speculative_;
  const int status = ProceedNoEvent(walk);
  if (status < 0) return status;
  return AfterBlock();
}

int FastFlowDecoder::ProceedWithTrace(uint64_t insn_ip, const X86Insn& insn) {
  int status = 0;
  if (insn.kind == X86Kind::kCondJump) {
    int taken = 0;
    status = qry_->CondBranch(&taken);
    if (status < 0) return status;
    ip_ = insn_ip + insn.length + (taken ? static_cast<uint64_t>(insn.branch_disp) : 0);
  } else {
    bool done = false;
    if (insn.kind == X86Kind::kRetNear) {
      // A compressed return is a taken bit.
      int taken = 0;
      status = qry_->CondBranch(&taken);
      if (status >= 0) {
        if (!taken) return -pte_bad_retcomp;
        if (ReturnStackEmpty()) return -pte_retstack_empty;
        ip_ = PopReturn();
        done = true;
      } else if (status != -pte_bad_query) {
        return status;
      }
    }
    if (!done) {
      status = qry_->IndirectBranch(&ip_);
      if (status < 0) return status;
    }
  }
  status_ = status;
  if (status & pts_ip_suppressed) return -pte_noip;
  return 0;
}

// The common case, from the memoised graph: one code block, then the branch that ends it.
int FastFlowDecoder::ProceedNoEvent(Walk& walk) {
  const CodeBlock* block = KnownNextBlock();
  if (!block) block = code_->Block(ip_, mode_, why_);
  if (!block) return kUnsupported;
  if (walk.ninsn + block->ninsn > kMaxBlockInsns)
    return Unsupported("a block of more than 65535 instructions");
  walk.ninsn += block->ninsn;
  walk.end_ip = block->last_ip;
  walk.isid = block->last_isid;
  walk.last = &block->last;
  const X86Insn& last = block->last;
  LogCall(block->last_ip, last);
  if (IsDirectCallOrJump(last)) {
    ip_ = last.NextIp(block->last_ip);
    SetNextBlock(code_->Edge(block, 1, ip_, mode_));
    return 0;
  }
  ip_ = block->last_ip;
  const int status = ProceedWithTrace(block->last_ip, last);
  if (status == 0 && last.kind == X86Kind::kCondJump)
    SetNextBlock(code_->Edge(block, ip_ == block->last_ip + last.length ? 0 : 1, ip_, mode_));
  else
    next_block_ = nullptr;
  return status;
}

// Run's loop for as long as it would only walk plain blocks (no event waiting, tracing on): each
// block goes to the model directly. Returns what NextPlain returned for the first block after
// which Run must look again, with that block in `walk` (not passed on) and `offset` where it
// began. Following tasks (a code switch hook), it asks the hook before each step as Run asks it
// before each block (a step whose bits came with a new time walks its first block alone, so that
// the hook is asked at that time before the second, as Run would).
int FastFlowDecoder::RunPlain(FlowToModel& model, Walk& walk, uint64_t& offset) {
  TntRuns* runs = &code_->runs();
  model.SetRunSource(runs->id());
  const bool tasks = static_cast<bool>(code_switch_);
  for (;;) {
    if (tasks && !walk_one_first_ && SwitchCodeAt(TimeNow(), qry_->Offset())) {
      // Another address space: its own graph and runs; nothing of the last one's carries over.
      runs = &code_->runs();
      model.SetRunSource(runs->id());
      last_run_ = nullptr;
    }
    if (model.TakesRunBlocks()) {
      int status = 0;
      const RunStep step = TakeTntRun(model, *runs, walk, offset, status);
      if (step == RunStep::kTaken) {
        if (!last_run_ || TakeSteadyRuns(model, *runs, walk, offset, status) == RunStep::kTaken)
          continue;
        return status;
      }
      if (step == RunStep::kReturn) return status;
    }
    last_run_ = nullptr;
    walk_one_first_ = false;
    const int status = NextPlain(walk);
    if (!GoesOnPlain(status)) return status;
    const uint64_t after = qry_->Offset();
    UpdateTime(after);
    if (model.TakesRunBlocks()) {
      model.TakeRunBlock(walk.ip, walk.end_ip, static_cast<uint32_t>(walk.ninsn), *walk.last,
                         ToExecMode(walk.mode), walk.speculative, offset, time_known_, time_tsc_);
    } else {
      EmitWalk(model, walk, offset);
    }
    offset = after;
  }
}

// The run's blocks up to `stop` (its core, or all of it) to the model, in one copy; the walk
// goes on from where they lead.
inline FastFlowDecoder::RunStep FastFlowDecoder::TakeRunPart(FlowToModel& model, const TntRun& run,
                                                             const RunStop& stop, uint64_t& offset,
                                                             uint64_t after) {
  model.TakeRun(run.blocks(), stop.blocks, stop.insns, stop.last_kind, run.LastIp(stop), offset,
                after, time_known_, time_tsc_, &run.note);
  ip_ = stop.next_ip;
  return Continue(run, stop.next, offset, after);
}

// A TNT run (fast/tnt_runs.h) from the block at ip_, when one applies: its blocks go to the
// model in one piece and the state moves past them as the plain walk would have moved it
// (kTaken). kNone: the plain walk must take this block (nothing has changed). kReturn: return
// `status` to Run with `walk` (the block after which Run looks again), as RunPlain does.
FastFlowDecoder::RunStep FastFlowDecoder::TakeTntRun(FlowToModel& model, TntRuns& runs, Walk& walk,
                                                     uint64_t& offset, int& status) {
  // The bits pending came with a time at which another task may run (TakeSteadyRuns read them):
  // the plain walk takes this block, and the hook is asked before the next.
  if (walk_one_first_) return RunStep::kNone;
  // The block at ip_: known when the last run led here, else from the graph.
  const TntRun* previous = last_run_;
  last_run_ = nullptr;
  const CodeBlock* block = previous ? previous_next_ : KnownNextBlock();
  if (!block) {
    block = code_->Block(ip_, mode_);
    if (!block) return RunStep::kNone;
  }
  const X86Kind kind = block->last.kind;
  if (block->ninsn > kMaxBlockInsns || kind == X86Kind::kOther) return RunStep::kNone;
  if (kind != X86Kind::kCondJump && kind != X86Kind::kRetNear) {
    if (IsDirectCallOrJump(block->last)) return RunStep::kNone;
    return TakeTipBlock(model, block, walk, offset, status);
  }
  // The caller's return addresses on top of the stack: in the key of a run from a return, and
  // of one that returns past its own calls.
  const CallerTops caller = Caller();
  // A return with none: the plain walk reports it.
  if (kind == X86Kind::kRetNear && caller.depth == 0) return RunStep::kNone;
  if (!qry_->HasTntBits()) {
    // Where the plain walk asks for this block's bit.
    const int refilled = qry_->RefillTnt();
    if (refilled < 0)
      return RefillFailed(model, block, kind == X86Kind::kRetNear, refilled, walk, offset, status);
    // The bits came with a time at which another task may run: the plain walk takes this block
    // (the bits pending), and the hook is asked at the new time before the next.
    if (code_switch_ && TaskMayChange()) return RunStep::kNone;
  }
  const uint32_t pending = qry_->PendingBits();
  const uint64_t state = TntRuns::State(qry_->PendingBitValues(), pending, speculative_);
  const TntRun* predicted = previous ? previous->FollowFor(block, state, returns_) : nullptr;
  const TntRun& run =
      predicted ? *predicted
                : runs.FindFor(block, state, kind == X86Kind::kRetNear, caller, mode_,
                               speculative_, qry_->PendingBitValues(), pending);
  if (run.empty()) return RunStep::kNone;
  if (previous) previous->Followed(&run);
  Prefetch(run.follow());  // likely the next run
  const uint64_t after = qry_->Offset();
  UpdateTime(after);
  const int flags = qry_->TakeTntBits(run.bits);
  status_ = flags;
  if (run.pops) PopReturn();
  const RunStop& core = run.core();
  ReplayReturns(run.ops(), core.ops);
  if (flags != 0) {
    // The run ends where Run must look again: its core's last block goes back as the plain
    // walk's.
    ip_ = core.next_ip;
    SetNextBlock(core.next);
    return HandBack(model, run, core, walk, offset, after, AfterBlock(), status);
  }
  if (!run.trails) return TakeRunPart(model, run, core, offset, after);
  // Past the last bit with no event waiting, the direct calls and jumps after it go too.
  ReplayReturns(run.ops() + core.ops, run.all.ops - core.ops);
  if (!run.ends_in_tip) return TakeRunPart(model, run, run.all, offset, after);
  // The last block's branch needs a TIP: asked for before anything is passed on, as the plain
  // walk asks for it at the end of that block.
  const uint64_t last_ip = run.LastIp(run.all);
  const int tip = TipAfterBlock(last_ip);
  if (!GoesOnPlain(tip)) {
    next_block_ = nullptr;
    return HandBack(model, run, run.all, walk, offset, after, tip, status);
  }
  // All but the last block carry the time at the TNT packet, the last the time at the TIP.
  const uint32_t before_tip = run.all.blocks - 1;
  if (before_tip)
    model.TakeRun(run.blocks(), before_tip, run.all.insns - run.all.last->ninsn,
                  RunBlockKind(run.blocks()[before_tip - 1]),
                  TntRun::LastIpOf(run.blocks(), before_tip), offset, after, time_known_, time_tsc_,
                  &run.note);
  const uint64_t at_tip = qry_->Offset();
  UpdateTime(at_tip);
  model.TakeRun(run.blocks() + before_tip, 1, run.all.last->ninsn, run.all.last_kind, last_ip,
                before_tip ? after : offset, after, time_known_, time_tsc_);
  // The block the TIP leads to, remembered on the run for the next time it goes the same way.
  return Continue(run, code_->TipTarget(run.tip(), ip_, mode_), offset, at_tip);
}

FastFlowDecoder::RunStep FastFlowDecoder::RefillFailed(FlowToModel& model,
                                                       const CodeBlock* block, bool returns,
                                                       int refilled, Walk& walk,
                                                       uint64_t& offset, int& status) {
  if (returns && refilled == -pte_bad_query)  // not a compressed return
    return TakeTipBlock(model, block, walk, offset, status);
  SetWalk(walk, *block, ip_);
  ip_ = block->last_ip;
  next_block_ = nullptr;
  status = refilled;
  return RunStep::kReturn;
}

// `walk` as the plain walk leaves it after walking `block` from `ip` (its first IP, or where the
// walk entered it).
void FastFlowDecoder::SetWalk(Walk& walk, const CodeBlock& block, uint64_t ip) const {
  walk.ninsn = block.ninsn;
  walk.ip = ip;
  walk.end_ip = block.last_ip;
  walk.isid = block.last_isid;
  walk.mode = mode_;
  walk.speculative = speculative_;
  walk.last = &block.last;
}

// One block whose branch a TIP decides (an indirect jump or call, a far branch, a return that
// is not compressed), as the plain walk takes it: its call pushed, then the TIP.
FastFlowDecoder::RunStep FastFlowDecoder::TakeTipBlock(FlowToModel& model, const CodeBlock* block,
                                                       Walk& walk, uint64_t& offset,
                                                       int& status) {
  const uint64_t start = ip_;
  if (AskTip(*block, start, walk, status) != RunStep::kTaken) return RunStep::kReturn;
  const uint64_t after = qry_->Offset();
  UpdateTime(after);
  model.TakeRunBlock(start, block->last_ip, block->ninsn, block->last, ToExecMode(mode_),
                     speculative_, offset, time_known_, time_tsc_);
  offset = after;
  // The block the TIP leads to, remembered on this one for the next time it goes the same way.
  SetNextBlock(code_->TipTarget(block->tip, ip_, mode_));
  return RunStep::kTaken;
}

FastFlowDecoder::RunStep FastFlowDecoder::AskTip(const CodeBlock& block, uint64_t start,
                                                 Walk& walk, int& status) {
  LogCall(block.last_ip, block.last);
  const int tip = TipAfterBlock(block.last_ip);
  if (GoesOnPlain(tip)) return RunStep::kTaken;
  next_block_ = nullptr;
  SetWalk(walk, block, start);
  status = tip;
  return RunStep::kReturn;
}

// After a run: the walk goes on from `next` (the block at ip_, when the graph has one).
FastFlowDecoder::RunStep FastFlowDecoder::Continue(const TntRun& run, const CodeBlock* next,
                                                   uint64_t& offset, uint64_t after) {
  offset = after;
  previous_next_ = next;
  if (next) last_run_ = &run;
  SetNextBlock(next);
  return RunStep::kTaken;
}

// A run walked up to `stop`, after which Run must look again: blocks before the
// last of them go to the model, the last goes back to Run as the plain walk's block, with
// `result` (what NextPlain would have returned for it) in `status`.
FastFlowDecoder::RunStep FastFlowDecoder::HandBack(FlowToModel& model, const TntRun& run,
                                                   const RunStop& stop, Walk& walk,
                                                   uint64_t& offset,
                                                   uint64_t after, int result, int& status) {
  const uint32_t emit = stop.blocks - 1;
  const CodeBlock* last = stop.last;
  if (emit) {
    const RunBlock& before = run.blocks()[emit - 1];
    uint64_t insns = 0;
    for (uint32_t i = 0; i < emit; ++i) insns += run.blocks()[i].insns;
    model.TakeRun(run.blocks(), emit, insns, RunBlockKind(before),
                  TntRun::LastIpOf(run.blocks(), emit), offset, after, time_known_, time_tsc_,
                  &run.note);
    offset = after;
  }
  SetWalk(walk, *last, last->first_ip);
  status = result;
  return RunStep::kReturn;
}

}  // namespace ptprof::pt::fast
