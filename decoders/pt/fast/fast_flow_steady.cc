// FastFlowDecoder's steady loop: after a TNT run, the runs that follow it in a loop's steady
// state, each taken as TakeTntRun (fast_flow_plain.cc) takes it in its simplest case, without
// what that case never needs (a look at the next block's code, a run built, an event, a TIP, a
// status to hand back) and with the walk's state written back once at the end.
#include "decoders/pt/fast/fast_flow.h"

#include "decoders/pt/flow_events.h"

namespace ptprof::pt::fast {

// Each turn takes the run from `block` (where the last one led) when TakeTntRun would take it
// and go on from its end: the run is known (the last one's follow, or in the table), it takes
// bits that are pending or in a TNT-8 packet with another TNT-8 packet after it (so reading it
// reads nothing else), no status comes after its bits, and it ends in no TIP. Anything else
// leaves the loop before the state moves, except that the bits TakeTntRun would have read for
// this block are read (it then finds them pending, as if it had read them itself).
void FastFlowDecoder::TakeSteadyRuns(FlowToModel& model, TntRuns& runs, uint64_t& offset) {
  if (!model.TakesSteadyRuns()) return;
  const TntRun* previous = last_run_;
  const CodeBlock* block = previous_next_;
  const RunStop* stop = nullptr;  // where the last run taken here stopped
  uint64_t at = offset;
  for (;;) {
    const TntRun* run = previous->follow;
    if (run && (run->start != block || run->core.blocks == 0)) run = nullptr;
    bool returns = false;
    if (run) {
      returns = run->pops;  // a run from a return takes the caller's address
    } else {
      const X86Kind kind = block->last.kind;
      if (block->ninsn > kMaxBlockInsns ||
          (kind != X86Kind::kCondJump && kind != X86Kind::kRetNear))
        break;
      returns = kind == X86Kind::kRetNear;
    }
    uint64_t ret = 0;
    if (returns) {
      if (ReturnStackEmpty()) break;
      ret = TopReturn();
    }
    if (!qry_->HasTntBits()) {
      if (!qry_->Tnt8PairFollows()) break;
      qry_->RefillTnt();  // answers 0: the packet after is a TNT-8 packet
    }
    const uint64_t state =
        TntRuns::State(qry_->PendingBitValues(), qry_->PendingBits(), speculative_);
    if (!run || run->state != state || run->ret != ret) {
      run = runs.Known(block, state, ret);
      if (!run || run->core.blocks == 0) break;
      if (previous->follow != run) previous->follow = run;
    }
    if (run->ends_in_tip || !qry_->TakesTntBitsQuietly(run->bits)) break;
    if (const TntRun* next = run->follow) {
      // Likely the next run: start loading it while this one is copied.
      __builtin_prefetch(next);
      __builtin_prefetch(reinterpret_cast<const char*>(next) + 64);
      __builtin_prefetch(reinterpret_cast<const char*>(next) + 128);
      __builtin_prefetch(reinterpret_cast<const char*>(next) + 192);
    }
    const uint64_t after = qry_->Offset();
    UpdateTime(after);
    status_ = qry_->TakeTntBits(run->bits);
    if (run->pops) PopReturn();
    stop = run->all.blocks == run->core.blocks ? &run->core : &run->all;
    ReplayReturns(run->ops(), stop->ops);
    model.AppendRun(run->blocks(), stop->blocks, stop->insns,
                    time_known_ ? time_tsc_ : kUnknownTime, at, after);
    at = after;
    previous = run;
    block = stop->next;
    if (!block) break;
  }
  if (!stop) return;
  model.EndRuns(stop->last_ip, stop->last_kind);
  ip_ = stop->next_ip;
  offset = at;
  Continue(*previous, block, offset, at);
}

}  // namespace ptprof::pt::fast
