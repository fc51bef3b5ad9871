// FastFlowDecoder's walk, rule for rule as libipt 2.0.5's block decoder walks: synchronising,
// events and the walk to where they bind, and Run's loop over the blocks. The plain walk (no
// event waiting, tracing on), which most blocks take, is in fast_flow_plain.cc.
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

}  // namespace

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
  returns_.Clear();
  time_offset_ = UINT64_MAX;
  const int status = qry_->SyncForward(&ip_);
  if (status < 0) return status;
  status_ = status;
  if (!(status & pts_ip_suppressed)) enabled_ = true;
  return ProceedTrailingEvent(false);
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
  if (insn.kind == X86Kind::kOther || IsDirectCallOrJump(insn)) {
    ip_ = insn.NextIp(insn_ip);
    return 0;
  }
  return -pte_bad_query;
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
  UpdateTime(after);  // blocks ended by bits of one TNT packet share the answer
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
  // Where the decoder stands, when nothing has moved it since the last block was emitted (the
  // next block starts there): saves asking libipt again.
  std::optional<uint64_t> known_offset;
  // Whether the next block follows events (or starts the decode): the model then notes the time
  // before it, which the block does not carry.
  bool after_events = true;
  asked_span_ = TscSpan{};
  asked_none_ = false;
  walk_one_first_ = false;
  for (;;) {
    if (code_switch_) SwitchCodeAt(TimeNow(), qry_->Offset());
    while (status >= 0 && (status & pts_event_pending)) {
      known_offset.reset();  // reading the event moves the decoder
      const uint64_t offset = qry_->Offset();
      pt_event event;
      status = Event(event);
      if (status >= 0 && code_switch_) {
        // An event with its own time may be the first of another task.
        const std::optional<uint64_t> tsc =
            event.has_tsc ? std::optional<uint64_t>(event.tsc) : TimeNow();
        SwitchCodeAt(tsc, offset);
      }
      if (status >= 0) {
        after_events = true;
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
    if (after_events && model) model->NoteTimeBefore(TimeNow().value_or(kUnknownTime));
    after_events = false;
    Walk walk;
    if (process_event_ || (status_ & pts_event_pending) || !enabled_) status = Next(walk);
    else if (model) status = RunPlain(*model, walk, offset);
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
