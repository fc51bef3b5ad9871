// FastFlowDecoder's steady loop: after a TNT run, what follows it for as long as the walk stays
// in its common cases (TNT runs already built, TIPs that bring nothing but a target), each step
// taken as TakeTntRun (fast_flow_plain.cc) takes it but without its general checks, the blocks
// appended to the model's batch directly (FlowToModel::AppendRun) and the walk's state written
// back once at the end. A loop's steady state spends most of the decode here.
#include "decoders/pt/fast/fast_flow.h"

#include "decoders/pt/flow_config.h"
#include "decoders/pt/flow_events.h"

namespace ptprof::pt::fast {

// Each turn takes what TakeTntRun would take from `block` (where the last turn led), in its
// common cases:
// - a TNT run, when it is known (one of the last run's follows, or in the table), takes
//   bits that are pending or in the TNT-8 packet that comes next, and no status comes after
//   them; when it ends in a branch a TIP decides, the TIP is asked for;
// - a block whose branch a TIP decides (a return among them when a TIP comes for it), or a
//   direct call or jump (as NextPlain walks it).
// Anything else leaves the loop before the state moves, except that the bits TakeTntRun would
// have read for this block are read (it then finds them pending, as if it had read them
// itself). Where reading a packet fails, or a TIP brings something other than the plain walk,
// this answers as TakeTntRun would (kReturn, with `walk` and `status`).
FastFlowDecoder::RunStep FastFlowDecoder::TakeSteadyRuns(FlowToModel& model, TntRuns& runs,
                                                         Walk& walk, uint64_t& offset,
                                                         int& status) {
  return code_switch_ ? SteadyRuns<true>(model, runs, walk, offset, status)
                      : SteadyRuns<false>(model, runs, walk, offset, status);
}

template <bool kTasks>
FastFlowDecoder::RunStep FastFlowDecoder::SteadyRuns(FlowToModel& model, TntRuns& runs,
                                                     Walk& walk, uint64_t& offset, int& status) {
  if (!model.TakesRunBlocks()) return RunStep::kTaken;
  const TntRun* previous = last_run_;  // the last run taken, when the walk went on from its end
  const CodeBlock* block = previous_next_;
  uint64_t at = offset;      // where the block at `block` began in the trace
  uint64_t next_ip = ip_;    // its address
  bool moved = false;        // anything taken here (the walk's state is then written back)
  // Where the last thing taken ends: a block's last instruction, or (held_run) the run's, read
  // from its last block only when the state is written back.
  uint64_t held_last_ip = 0;
  const TntRun* held_run = nullptr;
  X86Kind held_kind = X86Kind::kOther;
  // The walk's state as TakeTntRun finds it at `block` (Continue's, or TakeTipBlock's).
  auto write_back = [&] {
    if (!moved) return;
    model.EndRuns(held_run ? held_run->LastIp(held_run->all) : held_last_ip, held_kind);
    ip_ = next_ip;
    offset = at;
    previous_next_ = block;
    last_run_ = previous && block ? previous : nullptr;
    SetNextBlock(block);
  };
  // The same, for a step TakeTntRun would take past the point where it forgets the last run.
  auto hand_over = [&] {
    write_back();
    last_run_ = nullptr;
  };
  // Reading the TNT packet for `block` failed: as TakeTntRun fails there.
  auto refill_failed = [&](int refilled, bool returns) {
    hand_over();
    return RefillFailed(model, block, returns, refilled, walk, offset, status);
  };
  // Following tasks: the hook is asked before each block whenever the time has moved (RunPlain
  // asks it), so the loop leaves where a packet it read brought a time at which another task may
  // run (TaskMayChange).
  constexpr bool tasks = kTasks;
  for (;;) {
    if (tasks && TaskMayChange()) break;
    // With no bits pending, the next TNT-8 packet's bits are the key, read from its byte: the
    // packet is read (RefillTnt) only once the run is known, and when the run takes all its bits,
    // read and taken in one step.
    const BitsKey key = KeyOfBits();
    const bool fresh = key.fresh;
    const uint64_t state = key.state;
    // One of the last run's follows (never one with an empty core).
    const TntRun* run =
        previous && key.keyed ? previous->FollowFor(block, state, returns_) : nullptr;
    bool returns = false;
    if (run) {
      returns = run->pops;  // a run from a return takes the caller's address
    } else {
      const X86Kind kind = block->last.kind;
      if (block->ninsn > kMaxBlockInsns || kind == X86Kind::kOther) break;
      returns = kind == X86Kind::kRetNear;
      if (returns && ReturnStackEmpty()) break;
      // A return with no bits pending and a TIP next is not compressed: the TIP decides it (as
      // TakeTntRun finds when RefillTnt answers that no TNT comes, and takes it as
      // TakeTipBlock).
      const bool tip_return = returns && !key.keyed && qry_->TipNext();
      if ((kind != X86Kind::kCondJump && !returns) || tip_return) {
        if (block->last_ip < next_ip || block->last_ip - next_ip > UINT32_MAX) break;
        if (IsDirectCallOrJump(block->last)) {  // (never a return)
          // A direct call or jump, as the plain walk takes it (NextPlain): no question asked,
          // so the block is stamped where the last step left the decoder.
          LogCall(block->last_ip, block->last);
          model.AppendBlock(next_ip, block->last_ip, block->ninsn, block->last,
                            ToExecMode(mode_), speculative_, StampTsc(), at);
          moved = true;
          held_last_ip = block->last_ip;
          held_run = nullptr;
          held_kind = block->last.kind;
          next_ip = block->last.NextIp(block->last_ip);
          previous = nullptr;
          block = code_->Edge(block, 1, next_ip, mode_);
          if (!block) break;
          continue;
        }
        // A branch a TIP decides, as TakeTipBlock takes it.
        hand_over();
        const uint64_t start = next_ip;
        if (AskTip(*block, start, walk, status) != RunStep::kTaken) return RunStep::kReturn;
        const uint64_t after = qry_->Offset();
        UpdateTime(after);
        model.AppendBlock(start, block->last_ip, block->ninsn, block->last, ToExecMode(mode_),
                          speculative_, StampTsc(), at);
        moved = true;
        held_last_ip = block->last_ip;
        held_run = nullptr;
        held_kind = block->last.kind;
        at = after;
        next_ip = ip_;
        previous = nullptr;
        block = code_->TipTarget(block->tip, ip_, mode_);
        if (!block) break;
        continue;
      }
      if (!key.keyed) break;
      // The caller's return addresses on top of the stack: in the key of a run from a return,
      // and of one that returns past its own calls. (One on the way not built yet: TakeTntRun
      // builds it.)
      run = runs.KnownFor(block, state, returns, Caller());
      if (!run || run->empty()) {
        if (!fresh) break;
        const int refilled = qry_->RefillTnt();
        if (refilled < 0) return refill_failed(refilled, returns);
        // Bits with a time at which another task may run: the block takes them before the hook
        // is asked again.
        if (tasks && TaskMayChange()) walk_one_first_ = true;
        break;
      }
      if (previous) previous->Followed(run);
    }
    if (fresh && run->whole && !tasks) {
      const int took = qry_->TakeWholeTnt8();
      if (took < 0) return refill_failed(took, returns);
      if (took > 0) break;  // a status follows the bits: left pending
      status_ = 0;
    } else {
      if (fresh) {
        const int refilled = qry_->RefillTnt();
        if (refilled < 0) return refill_failed(refilled, returns);
        // Bits with a time at which another task may run: the run's first block alone first
        // (TakeTntRun), then the hook.
        if (tasks && TaskMayChange()) {
          walk_one_first_ = true;
          break;
        }
      }
      if (qry_->StatusAfterTaking(run->bits) != 0) break;
      status_ = qry_->TakeTntBits(run->bits);
    }
    const uint64_t after = qry_->Offset();
    UpdateTime(after);
    if (run->pops) PopReturn();
    const RunStop& stop = run->all;  // the core's stop when nothing trails it
    const RunBlock* blocks = run->blocks();
    ReplayReturns(run->ops(), stop.ops);
    PrefetchNext(runs, *run);
    if (run->ends_in_tip) {
      // The last block's branch needs a TIP, asked for before the run goes on, from the state
      // TakeTntRun would ask it in.
      hand_over();
      const int tip = TipAfterBlock(TntRun::LastIpOf(blocks, stop.blocks));
      if (!GoesOnPlain(tip)) {
        next_block_ = nullptr;
        return HandBack(model, *run, stop, walk, offset, after, tip, status);
      }
      // All but the last block carry the time at the TNT packet, the last the time at the TIP:
      // the run goes in whole and its last block is stamped again when the time moved.
      const uint64_t tnt_tsc = StampTsc();
      model.AppendRun(blocks, stop.blocks, stop.insns, tnt_tsc, at, after, &run->note);
      const uint64_t at_tip = qry_->Offset();
      UpdateTime(at_tip);
      if (const uint64_t tip_tsc = StampTsc(); tip_tsc != tnt_tsc) model.RestampHeld(tip_tsc);
      at = at_tip;
      next_ip = ip_;
      block = code_->TipTarget(run->tip(), ip_, mode_);
    } else {
      model.AppendRun(blocks, stop.blocks, stop.insns, StampTsc(), at, after, &run->note);
      at = after;
      next_ip = stop.next_ip;
      block = stop.next;
    }
    moved = true;
    held_run = run;
    held_kind = stop.last_kind;
    previous = run;
    if (!block) break;
  }
  write_back();
  return RunStep::kTaken;
}

}  // namespace ptprof::pt::fast
