#include "decoders/pt/fast/fast_flow.h"

#include <cstring>

#include "decoders/pt/flow_config.h"
#include "decoders/pt/flow_events.h"

namespace ptprof::pt::fast {

namespace {

const char* EventTypeName(pt_event_type type) {
  switch (type) {
    case ptev_paging:
      return "paging";
    case ptev_vmcs:
      return "vmcs";
    case ptev_async_vmcs:
      return "async vmcs";
    case ptev_exstop:
      return "exstop";
    case ptev_mwait:
      return "mwait";
    case ptev_ptwrite:
      return "ptwrite";
    default:
      return "unexpected";
  }
}

constexpr uint8_t kRetStackSize = 64;
constexpr uint32_t kMaxBlockInsns = 0xffff;  // pt_block's ninsn is 16 bits

bool IsDirect(const X86Insn& insn, X86Kind kind) {
  return insn.kind == kind && insn.has_branch_disp;
}

}  // namespace

// The instructions walked since the block began: [ip, end_ip], ninsn of them.
struct FastFlowDecoder::Walk {
  uint64_t ip = 0;
  uint64_t end_ip = 0;
  uint64_t ninsn = 0;
  int isid = 0;
  pt_exec_mode mode = ptem_unknown;
  bool speculative = false;
  const X86Insn* last = nullptr;  // the instruction at end_ip (stable: the caches never move it)
};

FastFlowDecoder::FastFlowDecoder(const pt_config& config, std::span<const uint8_t> trace,
                                 CodeBlocks& code)
    : config_(config), code_(&code) {
  config_.begin = const_cast<uint8_t*>(trace.data());
  config_.end = const_cast<uint8_t*>(trace.data()) + trace.size();
  // libipt's block decoder runs its query decoder with no flags of its own.
  std::memset(&config_.flags, 0, sizeof config_.flags);
}

FastFlowDecoder::~FastFlowDecoder() = default;

int FastFlowDecoder::Unsupported(std::string why) {
  if (why_.empty()) why_ = std::move(why);
  return kUnsupported;
}

int FastFlowDecoder::BlkStatus(int flags) const {
  if (!enabled_) flags |= pts_ip_suppressed;
  if ((status_ & pts_eos) && !process_event_) flags |= pts_eos;
  return flags;
}

int FastFlowDecoder::FetchEvent() {
  if (process_event_) return 1;
  if (!(status_ & pts_event_pending)) return 0;
  time_offset_ = UINT64_MAX;  // reading events is not reading TNT bits: ask for the time again
  const int status = qry_->Event(&event_);
  if (status < 0) return status;
  process_event_ = true;
  status_ = status;
  return 1;
}

int FastFlowDecoder::SyncForward() {
  ip_ = 0;
  mode_ = ptem_unknown;
  status_ = 0;
  enabled_ = false;
  process_event_ = false;
  speculative_ = false;
  std::memset(&event_, 0, sizeof event_);
  ret_top_ = ret_bottom_ = 0;
  time_offset_ = UINT64_MAX;
  const int status = qry_->SyncForward(&ip_);
  if (status < 0) return status;
  status_ = status;
  if (!(status & pts_ip_suppressed)) enabled_ = true;
  return ProceedTrailingEvent(false);
}

void FastFlowDecoder::LogCall(uint64_t insn_ip, const X86Insn& insn) {
  if (insn.kind != X86Kind::kCallNear) return;
  // A direct call to the next instruction (position-independent code) returns nowhere.
  if (insn.has_branch_disp && insn.branch_disp == 0) return;
  PushReturn(insn_ip + insn.length);
}

inline void FastFlowDecoder::PushReturn(uint64_t ip) {
  retstack_[ret_top_] = ip;
  ret_top_ = ret_top_ == kRetStackSize ? 0 : ret_top_ + 1;
  if (ret_bottom_ == ret_top_) ret_bottom_ = ret_bottom_ == kRetStackSize ? 0 : ret_bottom_ + 1;
}

// The return stack operations of a run, in order, as its calls and returns made them.
inline void FastFlowDecoder::ReplayReturns(const uint64_t* ops, uint32_t count) {
  for (uint32_t i = 0; i < count; ++i) {
    if (ops[i] == TntRun::kPop) ret_top_ = ret_top_ ? ret_top_ - 1 : kRetStackSize;
    else PushReturn(ops[i]);
  }
}

// The time at `offset` (the query decoder's time changes only with the packets it reads, which
// move its offset).
inline void FastFlowDecoder::UpdateTime(uint64_t offset) {
  if (offset == time_offset_) return;
  uint64_t tsc = 0;
  time_known_ = qry_->Time(&tsc) >= 0;
  time_tsc_ = tsc;
  time_offset_ = offset;
}

void FastFlowDecoder::SetDisableResumeIp(uint64_t insn_ip, const X86Insn& insn) {
  switch (insn.kind) {
    case X86Kind::kCallNear:
    case X86Kind::kCallFar:
    case X86Kind::kSyscall:
    case X86Kind::kInterrupt:
    case X86Kind::kVmCall:
      ip_ = insn_ip + insn.length;
      break;
    default:
      ip_ = 0;
      break;
  }
}

int FastFlowDecoder::NextIpWithoutTrace(uint64_t insn_ip, const X86Insn& insn) {
  if (insn.kind == X86Kind::kOther || IsDirect(insn, X86Kind::kCallNear) ||
      IsDirect(insn, X86Kind::kJumpNear)) {
    ip_ = insn.NextIp(insn_ip);
    return 0;
  }
  return -pte_bad_query;
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
        if (ret_top_ == ret_bottom_) return -pte_retstack_empty;
        ret_top_ = ret_top_ ? ret_top_ - 1 : kRetStackSize;
        ip_ = retstack_[ret_top_];
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

int FastFlowDecoder::ProceedOneInsn(Walk& walk, const CodeInsn*& insn) {
  if (walk.ninsn >= kMaxBlockInsns) return Unsupported("a block of more than 65535 instructions");
  insn = code_->Insn(ip_, mode_, why_);
  if (!insn) return kUnsupported;
  LogCall(insn->ip, insn->insn);
  walk.ninsn += 1;
  walk.end_ip = insn->ip;
  walk.isid = insn->isid;
  walk.last = &insn->insn;
  return 1;
}

int FastFlowDecoder::ProceedToIp(Walk& walk, uint64_t ip, const CodeInsn*& last) {
  for (;;) {
    if (ip_ == ip) return 1;
    int status = ProceedOneInsn(walk, last);
    if (status <= 0) return status;
    status = NextIpWithoutTrace(last->ip, last->insn);
    if (status < 0) return status;
    // Blocks end at direct calls and jumps (FlowDecoder asks libipt for that).
    if (last->insn.kind == X86Kind::kCallNear || last->insn.kind == X86Kind::kJumpNear)
      return ip_ == ip ? 1 : 0;
  }
}

int FastFlowDecoder::ProceedToCr3Write(Walk& walk, const CodeInsn*& last) {
  for (;;) {
    int status = ProceedOneInsn(walk, last);
    if (status <= 0) return status;
    if (last->writes_cr3) return 1;
    status = NextIpWithoutTrace(last->ip, last->insn);
    if (status < 0) return status;
    if (last->insn.kind == X86Kind::kCallNear || last->insn.kind == X86Kind::kJumpNear) return 0;
  }
}

int FastFlowDecoder::ProceedToIpWithTrace(Walk& walk, uint64_t ip) {
  const CodeInsn* last = nullptr;
  const int status = ProceedToIp(walk, ip, last);
  if (status != -pte_bad_query) return status;
  return ProceedWithTrace(last->ip, last->insn);
}

// The common case, from the memoised graph: one code block, then the branch that ends it.
int FastFlowDecoder::ProceedNoEvent(Walk& walk) {
  const CodeBlock* block = next_block_ && next_block_->first_ip == ip_ && next_mode_ == mode_ &&
                                   next_code_ == code_
                               ? next_block_
                               : code_->Block(ip_, mode_, why_);
  if (!block) return kUnsupported;
  if (walk.ninsn + block->ninsn > kMaxBlockInsns)
    return Unsupported("a block of more than 65535 instructions");
  walk.ninsn += block->ninsn;
  walk.end_ip = block->last_ip;
  walk.isid = block->last_isid;
  walk.last = &block->last;
  const X86Insn& last = block->last;
  LogCall(block->last_ip, last);
  if (IsDirect(last, X86Kind::kCallNear) || IsDirect(last, X86Kind::kJumpNear)) {
    ip_ = last.NextIp(block->last_ip);
    Remember(block, 1);
    return 0;
  }
  ip_ = block->last_ip;
  const int status = ProceedWithTrace(block->last_ip, last);
  if (status == 0 && last.kind == X86Kind::kCondJump)
    Remember(block, ip_ == block->last_ip + last.length ? 0 : 1);
  else
    next_block_ = nullptr;
  return status;
}

// The block at ip_ (where `from` went by its edge `taken`), from the edge when it was walked
// before, else looked up and kept on the edge; for ProceedNoEvent's next call.
void FastFlowDecoder::Remember(const CodeBlock* from, int taken) {
  const CodeBlock* to = from->next[taken];
  if (!to) {
    std::string ignored;
    to = code_->Block(ip_, mode_, ignored);
    from->next[taken] = to;
  }
  next_block_ = to;
  next_mode_ = mode_;
  next_code_ = code_;
}

int FastFlowDecoder::ProceedEvent(Walk& walk) {
  const CodeInsn* last = nullptr;
  int status = 0;
  switch (event_.type) {
    case ptev_enabled:
    case ptev_overflow:
    case ptev_stop:
    case ptev_pwre:
    case ptev_pwrx:
    case ptev_tick:
    case ptev_cbr:
    case ptev_mnt:
      break;
    case ptev_disabled:
      if (event_.ip_suppressed) {
        if (config_.addr_filter.config.addr_cfg && config_.errata.skl014)
          return Unsupported("a TIP.PGD without IP under erratum SKL014");
        status = ProceedToCr3Write(walk, last);
      } else {
        status = ProceedToIp(walk, event_.variant.disabled.ip, last);
      }
      if (status <= 0) {
        if (status != -pte_bad_query) return status;
        SetDisableResumeIp(last->ip, last->insn);
      }
      break;
    case ptev_async_disabled:
      if (config_.errata.skd022) return Unsupported("an async disable under erratum SKD022");
      status = ProceedToIp(walk, event_.variant.async_disabled.at, last);
      if (status <= 0) return status;
      break;
    case ptev_async_branch:
      status = ProceedToIp(walk, event_.variant.async_branch.from, last);
      if (status <= 0) return status;
      break;
    case ptev_exec_mode:
      if (!event_.ip_suppressed) {
        status = ProceedToIpWithTrace(walk, event_.variant.exec_mode.ip);
        if (status < 0) return status;
        if (ip_ != event_.variant.exec_mode.ip) return 0;
      }
      break;
    case ptev_tsx:
      if (event_.ip_suppressed) break;
      status = ProceedToIp(walk, event_.variant.tsx.ip, last);
      if (status <= 0) return status;
      break;
    case ptev_async_paging:
      // A CR3 change where the trace says (PIP in PSB+ or with a FUP): walk to its IP, if any.
      if (!event_.ip_suppressed) {
        status = ProceedToIpWithTrace(walk, event_.variant.async_paging.ip);
        if (status < 0) return status;
        if (ip_ != event_.variant.async_paging.ip) return 0;
      }
      break;
    case ptev_paging:
      // While tracing is off it applies at once; otherwise it binds to the instruction that
      // writes CR3 and libipt postpones that instruction, which this engine does not do.
      if (enabled_) return Unsupported("a paging event while tracing");
      break;
    default:
      return Unsupported(std::string("a ") + EventTypeName(event_.type) + " event");
  }
  return BlkStatus(pts_event_pending);
}

// `after_block`: called at the end of a block (libipt passes the block), not after an event or
// a synchronisation.
int FastFlowDecoder::ProceedTrailingEvent(bool after_block) {
  const int fetched = FetchEvent();
  if (fetched <= 0) return fetched < 0 ? fetched : BlkStatus(0);
  switch (event_.type) {
    case ptev_disabled:
      break;  // binds to an instruction: processed on the next block
    case ptev_enabled:
    case ptev_overflow:
    case ptev_stop:
    case ptev_pwre:
    case ptev_pwrx:
    case ptev_tick:
    case ptev_cbr:
    case ptev_mnt:
      return BlkStatus(pts_event_pending);
    case ptev_async_disabled:
      if (ip_ != event_.variant.async_disabled.at) break;
      if (config_.errata.skd022) return Unsupported("an async disable under erratum SKD022");
      return BlkStatus(pts_event_pending);
    case ptev_async_branch:
      if (ip_ != event_.variant.async_branch.from) break;
      return BlkStatus(pts_event_pending);
    case ptev_exec_mode:
      if (!event_.ip_suppressed && ip_ != event_.variant.exec_mode.ip) break;
      return BlkStatus(pts_event_pending);
    case ptev_tsx:
      if (!event_.ip_suppressed) {
        if (after_block && config_.errata.bdm64)
          return Unsupported("a transaction abort under erratum BDM64");
        if (ip_ != event_.variant.tsx.ip) break;
      }
      return BlkStatus(pts_event_pending);
    case ptev_async_paging:
      if (!event_.ip_suppressed && ip_ != event_.variant.async_paging.ip) break;
      return BlkStatus(pts_event_pending);
    case ptev_paging:
      if (!enabled_) return BlkStatus(pts_event_pending);
      break;  // binds to an instruction: the next block's event (see ProceedEvent)
    default:
      return Unsupported(std::string("a ") + EventTypeName(event_.type) + " event");
  }
  return BlkStatus(0);
}

int FastFlowDecoder::Proceed(Walk& walk) {
  const int fetched = FetchEvent();
  if (fetched != 0) return fetched < 0 ? fetched : ProceedEvent(walk);
  if (!enabled_) return (status_ & pts_eos) ? -pte_eos : -pte_no_enable;
  const int status = ProceedNoEvent(walk);
  if (status < 0) return status;
  return ProceedTrailingEvent(true);
}

int FastFlowDecoder::Next(Walk& walk) {
  walk = Walk{};
  walk.ip = ip_;
  walk.mode = mode_;
  walk.speculative = speculative_;
  return Proceed(walk);
}

// Next when no event waits and tracing is on (most blocks): Proceed without its questions.
inline int FastFlowDecoder::NextPlain(Walk& walk) {
  walk.ninsn = 0;
  walk.ip = ip_;
  walk.mode = mode_;
  walk.speculative = speculative_;
  const int status = ProceedNoEvent(walk);
  if (status < 0) return status;
  if (!(status_ & pts_event_pending)) return BlkStatus(0);
  return ProceedTrailingEvent(true);
}

int FastFlowDecoder::Event(pt_event& out) {
  if (!process_event_) return -pte_bad_query;
  pt_event& ev = event_;
  switch (ev.type) {
    case ptev_enabled:
      if (ev.variant.enabled.ip == ip_) ev.variant.enabled.resumed = 1;
      if (ev.status_update || enabled_) return -pte_bad_context;
      if (ev.ip_suppressed) return -pte_noip;
      ip_ = ev.variant.enabled.ip;
      enabled_ = true;
      break;
    case ptev_async_disabled:
      if (ip_ != ev.variant.async_disabled.at) return -pte_bad_query;
      [[fallthrough]];
    case ptev_disabled:
      if (ev.status_update || !enabled_) return -pte_bad_context;
      enabled_ = false;
      break;
    case ptev_async_branch:
      if (ip_ != ev.variant.async_branch.from) return -pte_bad_query;
      if (ev.status_update || !enabled_) return -pte_bad_context;
      ip_ = ev.variant.async_branch.to;
      break;
    case ptev_overflow:
      if (ev.status_update) return -pte_bad_context;
      if (ev.ip_suppressed) {
        enabled_ = false;
        ip_ = 0;
      } else {
        enabled_ = true;
        ip_ = ev.variant.overflow.ip;
      }
      speculative_ = false;
      break;
    case ptev_tsx:
      if (!ev.ip_suppressed && ip_ != ev.variant.tsx.ip) return -pte_bad_query;
      speculative_ = ev.variant.tsx.speculative;
      break;
    case ptev_async_paging:
      if (!ev.ip_suppressed && ip_ != ev.variant.async_paging.ip) return -pte_bad_query;
      break;  // the CR3 only selects sections loaded for one address space; ptprof loads none
    case ptev_paging:
      break;
    case ptev_exec_mode:
      if (!ev.ip_suppressed && ip_ != ev.variant.exec_mode.ip) return -pte_bad_query;
      if (ev.status_update && enabled_ && mode_ != ptem_unknown &&
          mode_ != ev.variant.exec_mode.mode)
        return -pte_bad_status_update;
      mode_ = ev.variant.exec_mode.mode;
      break;
    case ptev_stop:
      if (ev.status_update || enabled_) return -pte_bad_context;
      break;
    case ptev_pwre:
    case ptev_pwrx:
    case ptev_tick:
    case ptev_cbr:
    case ptev_mnt:
      break;
    default:
      return Unsupported(std::string("a ") + EventTypeName(ev.type) + " event");
  }
  process_event_ = false;
  out = ev;
  return ProceedTrailingEvent(false);
}

// Run's loop for as long as it would only walk plain blocks (no event waiting, tracing on, no
// task to follow): each block goes to the model directly. Returns what NextPlain returned for the
// first block after which Run must look again, with that block in `walk` (not passed on) and
// `offset` where it began.
int FastFlowDecoder::RunPlain(FlowToModel& model, Walk& walk, uint64_t& offset) {
  TntRuns& runs = code_->runs();
  for (;;) {
    if (model.TakesRunBlocks()) {
      int status = 0;
      const RunStep step = TakeTntRun(model, runs, walk, offset, status);
      if (step == RunStep::kTaken) continue;
      if (step == RunStep::kReturn) return status;
    }
    last_run_ = nullptr;
    const int status = NextPlain(walk);
    if (status != 0 || process_event_ || (status_ & pts_event_pending) || !enabled_) return status;
    const uint64_t after = qry_->Offset();
    if (after != time_offset_) {
      uint64_t tsc = 0;
      time_known_ = qry_->Time(&tsc) >= 0;
      time_tsc_ = tsc;
      time_offset_ = after;
    }
    if (model.TakesRunBlocks()) {
      model.TakeRunBlock(walk.ip, walk.end_ip, static_cast<uint32_t>(walk.ninsn), *walk.last,
                         ToExecMode(walk.mode), walk.speculative, offset, time_known_, time_tsc_);
    } else {
      EmitWalk(model, walk, offset);
    }
    offset = after;
  }
}

// A TNT run (fast/tnt_runs.h) from the block at ip_, when one applies: its blocks go to the
// model in one piece and the state moves past them as the plain walk would have moved it
// (kTaken). kNone: the plain walk must take this block (nothing has changed). kReturn: return
// `status` to Run with `walk` (the block after which Run looks again), as RunPlain does.
FastFlowDecoder::RunStep FastFlowDecoder::TakeTntRun(FlowToModel& model, TntRuns& runs, Walk& walk,
                                                     uint64_t& offset, int& status) {
  // The block at ip_: known when the last run led here, else from the graph.
  const TntRun* previous = last_run_;
  last_run_ = nullptr;
  const CodeBlock* block = previous ? previous_next_
                           : next_block_ && next_block_->first_ip == ip_ &&
                                   next_mode_ == mode_ && next_code_ == code_
                               ? next_block_
                               : nullptr;
  if (!block) {
    std::string ignored;
    block = code_->Block(ip_, mode_, ignored);
    if (!block) return RunStep::kNone;
  }
  const X86Kind kind = block->last.kind;
  if (block->ninsn > kMaxBlockInsns || kind == X86Kind::kOther) return RunStep::kNone;
  if (kind != X86Kind::kCondJump && kind != X86Kind::kRetNear) {
    if (IsDirect(block->last, X86Kind::kCallNear) || IsDirect(block->last, X86Kind::kJumpNear))
      return RunStep::kNone;
    return TakeTipBlock(model, block, walk, offset, status);
  }
  uint64_t ret = 0;
  if (kind == X86Kind::kRetNear) {
    if (ret_top_ == ret_bottom_) return RunStep::kNone;  // the plain walk reports it
    ret = retstack_[ret_top_ ? ret_top_ - 1 : kRetStackSize];
  }
  if (!qry_->HasTntBits()) {
    // Where the plain walk asks for this block's bit.
    const int refilled = qry_->RefillTnt();
    if (refilled < 0) {
      if (kind == X86Kind::kRetNear && refilled == -pte_bad_query)  // not a compressed return
        return TakeTipBlock(model, block, walk, offset, status);
      SetWalk(walk, *block, ip_);
      ip_ = block->last_ip;
      next_block_ = nullptr;
      status = refilled;
      return RunStep::kReturn;
    }
  }
  const uint32_t pending = qry_->PendingBits();
  const uint64_t state = TntRuns::State(qry_->PendingBitValues(), pending, speculative_);
  const TntRun* predicted = previous ? previous->follow : nullptr;
  const TntRun& run =
      predicted && predicted->start == block && predicted->state == state && predicted->ret == ret
          ? *predicted
          : runs.Find(block, state, ret, mode_, speculative_, qry_->PendingBitValues(), pending);
  if (previous) previous->follow = &run;
  if (run.core == 0) return RunStep::kNone;
  if (const TntRun* next = run.follow) {
    // Likely the next run: start loading it while this one is copied.
    __builtin_prefetch(next);
    __builtin_prefetch(reinterpret_cast<const char*>(next) + 64);
    __builtin_prefetch(reinterpret_cast<const char*>(next) + 128);
    __builtin_prefetch(reinterpret_cast<const char*>(next) + 192);
  }
  const uint64_t after = qry_->Offset();
  UpdateTime(after);
  const int flags = qry_->TakeTntBits(run.bits);
  status_ = flags;
  if (run.pops) ret_top_ = ret_top_ ? ret_top_ - 1 : kRetStackSize;
  ReplayReturns(run.ops(), run.core_ops);
  if (flags != 0) {
    // The run ends where Run must look again: its core's last block goes back as the plain
    // walk's.
    ip_ = run.core_next_ip;
    next_block_ = run.core_next;
    next_mode_ = mode_;
    next_code_ = code_;
    return HandBack(model, run, run.core, walk, offset, after,
                    (status_ & pts_event_pending) ? ProceedTrailingEvent(true) : BlkStatus(0),
                    status);
  }
  if (run.size == run.core) {
    model.TakeRun(run.blocks(), run.core, run.core_insns, run.core_last_kind, run.core_last_ip,
                  offset, after, time_known_, time_tsc_);
    ip_ = run.core_next_ip;
    return Continue(run, run.core_next, offset, after);
  }
  // Past the last bit with no event waiting, the direct calls and jumps after it go too.
  ReplayReturns(run.ops() + run.core_ops, run.ops_size - run.core_ops);
  if (!run.ends_in_tip) {
    model.TakeRun(run.blocks(), run.size, run.core_insns + run.trailing_insns, run.last_kind,
                  run.last_ip, offset, after, time_known_, time_tsc_);
    ip_ = run.next_ip;
    return Continue(run, run.next, offset, after);
  }
  // The last block's branch needs a TIP: asked for before anything is passed on, as the plain
  // walk asks for it at the end of that block.
  ip_ = run.last_ip;
  int tip = qry_->IndirectBranch(&ip_);
  if (tip >= 0) {
    status_ = tip;
    tip = (tip & pts_ip_suppressed) ? -pte_noip : 0;
  }
  if (tip == 0)
    tip = (status_ & pts_event_pending) ? ProceedTrailingEvent(true) : BlkStatus(0);
  if (tip != 0 || process_event_ || (status_ & pts_event_pending) || !enabled_) {
    next_block_ = nullptr;
    return HandBack(model, run, run.size, walk, offset, after, tip, status);
  }
  // All but the last block carry the time at the TNT packet, the last the time at the TIP.
  const uint32_t before_tip = run.size - 1;
  if (before_tip)
    model.TakeRun(run.blocks(), before_tip, run.core_insns + run.trailing_insns - run.last->ninsn,
                  RunBlockKind(run.blocks()[before_tip - 1]),
                  run.blocks()[before_tip - 1].first_ip_or_index +
                      run.blocks()[before_tip - 1].span,
                  offset, after, time_known_, time_tsc_);
  const uint64_t at_tip = qry_->Offset();
  UpdateTime(at_tip);
  model.TakeRun(run.blocks() + before_tip, 1, run.last->ninsn, run.last_kind, run.last_ip,
                before_tip ? after : offset, after, time_known_, time_tsc_);
  offset = at_tip;
  // The block the TIP leads to, remembered on the run for the next time it goes the same way.
  if (run.tip_target != ip_ || !run.tip_next) {
    std::string ignored;
    run.tip_target = ip_;
    run.tip_next = code_->Block(ip_, mode_, ignored);
  }
  previous_next_ = run.tip_next;
  if (previous_next_) last_run_ = &run;
  next_block_ = previous_next_;
  next_mode_ = mode_;
  next_code_ = code_;
  return RunStep::kTaken;
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
  LogCall(block->last_ip, block->last);
  ip_ = block->last_ip;
  int tip = qry_->IndirectBranch(&ip_);
  if (tip >= 0) {
    status_ = tip;
    tip = (tip & pts_ip_suppressed) ? -pte_noip : 0;
  }
  if (tip == 0) tip = (status_ & pts_event_pending) ? ProceedTrailingEvent(true) : BlkStatus(0);
  if (tip != 0 || process_event_ || (status_ & pts_event_pending) || !enabled_) {
    next_block_ = nullptr;
    SetWalk(walk, *block, start);
    status = tip;
    return RunStep::kReturn;
  }
  const uint64_t after = qry_->Offset();
  UpdateTime(after);
  model.TakeRunBlock(start, block->last_ip, block->ninsn, block->last, ToExecMode(mode_),
                     speculative_, offset, time_known_, time_tsc_);
  offset = after;
  // The block the TIP leads to, remembered on this one for the next time it goes the same way.
  if (block->tip_target != ip_ || !block->tip_next) {
    std::string ignored;
    block->tip_target = ip_;
    block->tip_next = code_->Block(ip_, mode_, ignored);
  }
  next_block_ = block->tip_next;
  next_mode_ = mode_;
  next_code_ = code_;
  return RunStep::kTaken;
}

// After a run: the walk goes on from `next` (the block at ip_, when the graph has one).
FastFlowDecoder::RunStep FastFlowDecoder::Continue(const TntRun& run, const CodeBlock* next,
                                                   uint64_t& offset, uint64_t after) {
  offset = after;
  previous_next_ = next;
  if (next) last_run_ = &run;
  next_block_ = next;
  next_mode_ = mode_;
  next_code_ = code_;
  return RunStep::kTaken;
}

// A run whose first `upto` blocks were walked, after which Run must look again: blocks before the
// last of them go to the model, the last goes back to Run as the plain walk's block, with
// `result` (what NextPlain would have returned for it) in `status`.
FastFlowDecoder::RunStep FastFlowDecoder::HandBack(FlowToModel& model, const TntRun& run,
                                                   uint32_t upto, Walk& walk, uint64_t& offset,
                                                   uint64_t after, int result, int& status) {
  const uint32_t emit = upto - 1;
  const CodeBlock* last = upto == run.core ? run.core_last : run.last;
  if (emit) {
    const PackedEvent& before = run.blocks()[emit - 1];
    uint64_t insns = 0;
    for (uint32_t i = 0; i < emit; ++i) insns += run.blocks()[i].insns;
    model.TakeRun(run.blocks(), emit, insns, RunBlockKind(before),
                  before.first_ip_or_index + before.span, offset, after, time_known_, time_tsc_);
    offset = after;
  }
  SetWalk(walk, *last, last->first_ip);
  status = result;
  return RunStep::kReturn;
}

uint64_t FastFlowDecoder::EmitWalk(FlowObserver& observer, const Walk& walk, uint64_t offset) {
  const uint64_t after = qry_->Offset();
  if (walk.ninsn == 0) return after;
  WalkedBlock block;
  block.ip = walk.ip;
  block.end_ip = walk.end_ip;
  block.ninsn = static_cast<uint32_t>(walk.ninsn);
  block.mode = walk.mode;
  block.isid = walk.isid;
  block.speculative = walk.speculative;
  block.offset = offset;
  block.decoder_offset = after;
  block.last = walk.last;
  // The query decoder's time changes only with the packets it reads, which move its offset: at
  // the offset it was last asked at, the answer is the same (blocks ended by bits of one TNT).
  if (after != time_offset_) {
    uint64_t tsc = 0;
    time_known_ = qry_->Time(&tsc) >= 0;
    time_tsc_ = tsc;
    time_offset_ = after;
  }
  block.has_tsc = time_known_;
  block.tsc = time_tsc_;
  observer.OnWalkedBlock(block);
  return after;
}

FastFlowOutcome FastFlowDecoder::Run(FlowObserver& observer, uint64_t trust_end) {
  FastFlowOutcome outcome;
  qry_ = std::make_unique<QueryDecoder>(config_);
  // The end of the decode: -pte_eos ends it as libipt's ends; any other failure is the fast
  // engine's limit, unless it lies where the caller trusts nothing anyway.
  auto stop = [&](int status) {
    if (status == -pte_eos) return;
    const uint64_t offset = qry_->Offset();
    if (offset >= trust_end) {
      outcome.stopped_untrusted = true;
      return;
    }
    outcome.handled = false;
    outcome.why_offset = offset;
    if (status == kUnsupported && why_.empty()) why_ = qry_->why();
    outcome.why = status == kUnsupported
                      ? why_
                      : std::string("a decode error (") + pt_errstr(pt_errcode(status)) + ")";
  };
  int status = SyncForward();
  if (status < 0) {
    stop(status);
    return outcome;
  }
  outcome.synced = true;
  FlowToModel* model = observer.AsModel();
  // The decoder's time now (libipt's pt_blk_time), when it has one.
  auto now = [&]() -> std::optional<uint64_t> {
    uint64_t tsc = 0;
    if (qry_->Time(&tsc) < 0) return std::nullopt;
    return tsc;
  };
  // Where the decoder stands, when nothing has moved it since the last block was emitted (the
  // next block starts there): saves asking libipt again.
  std::optional<uint64_t> known_offset;
  for (;;) {
    if (code_switch_) {
      if (CodeBlocks* code = code_switch_(now(), qry_->Offset())) code_ = code;
    }
    while (status >= 0 && (status & pts_event_pending)) {
      known_offset.reset();  // reading the event moves the decoder
      const uint64_t offset = qry_->Offset();
      pt_event event;
      status = Event(event);
      if (status >= 0 && code_switch_) {
        // An event with its own time may be the first of another task.
        const std::optional<uint64_t> tsc =
            event.has_tsc ? std::optional<uint64_t>(event.tsc) : now();
        if (CodeBlocks* code = code_switch_(tsc, offset)) code_ = code;
      }
      if (status >= 0) {
        observer.OnEvent(event, offset);
        if (observer.ImageAfterEvent()) {
          status = Unsupported("an observer that switches images");
        }
      }
    }
    if (status < 0) break;
    if (status & pts_eos) {
      if (!(status & pts_ip_suppressed)) observer.OnEndOfTrace();
      status = -pte_eos;
      break;
    }
    uint64_t offset = known_offset ? *known_offset : qry_->Offset();
    Walk walk;
    if (process_event_ || (status_ & pts_event_pending) || !enabled_) status = Next(walk);
    else if (model && !code_switch_) status = RunPlain(*model, walk, offset);
    else status = NextPlain(walk);
    if (status < 0) {
      if (status == -pte_eos) EmitWalk(observer, walk, offset);  // as libipt: the partial block
      break;
    }
    known_offset = EmitWalk(observer, walk, offset);
  }
  stop(status);
  return outcome;
}

}  // namespace ptprof::pt::fast
