#include "decoders/pt/flow_events.h"

#include <cstring>

#include "decoders/pt/flow_config.h"

namespace ptprof::pt {

namespace {

GapReason ReasonOf(int code) {
  switch (-code) {
    case pte_nomap: return GapReason::kNoImage;
    case pte_bad_insn: return GapReason::kOther;
    case pte_eos: return GapReason::kTruncated;
    default: return GapReason::kDesync;
  }
}

// A marker of `kind` carrying `value` (Marker's label stays empty: designated initializers
// would have to name it).
Marker MarkerOf(Marker::Kind kind, uint64_t value = 0) {
  Marker m;
  m.kind = kind;
  m.value = value;
  return m;
}

template <class T>
T WithIp(T body, bool has_ip, uint64_t ip) {
  body.has_ip = has_ip;
  body.ip = has_ip ? ip : 0;
  return body;
}

}  // namespace

bool EventToModel(const pt_event& ev, EventBody& body) {
  if (ev.status_update) return false;
  const bool has_ip = !ev.ip_suppressed;
  switch (ev.type) {
    case ptev_enabled:
      body = WithIp(TraceToggle{ev.variant.enabled.resumed ? TraceToggle::Kind::kResumed
                                                           : TraceToggle::Kind::kEnabled},
                    true, ev.variant.enabled.ip);
      return true;
    case ptev_disabled:
      body = WithIp(TraceToggle{TraceToggle::Kind::kDisabled}, has_ip, ev.variant.disabled.ip);
      return true;
    case ptev_async_disabled:
      body = WithIp(TraceToggle{TraceToggle::Kind::kAsyncDisabled}, true,
                    ev.variant.async_disabled.at);
      return true;
    case ptev_async_branch: return false;
    case ptev_paging:
      body = ContextSwitch{.kind = ContextSwitch::Kind::kPaging,
                           .value = ev.variant.paging.cr3,
                           .non_root = ev.variant.paging.non_root != 0};
      return true;
    case ptev_async_paging:
      body = WithIp(ContextSwitch{.kind = ContextSwitch::Kind::kPaging,
                                  .value = ev.variant.async_paging.cr3,
                                  .non_root = ev.variant.async_paging.non_root != 0},
                    true, ev.variant.async_paging.ip);
      return true;
    case ptev_vmcs:
      body = ContextSwitch{.kind = ContextSwitch::Kind::kVmcs, .value = ev.variant.vmcs.base};
      return true;
    case ptev_async_vmcs:
      body = WithIp(ContextSwitch{.kind = ContextSwitch::Kind::kVmcs,
                                  .value = ev.variant.async_vmcs.base},
                    true, ev.variant.async_vmcs.ip);
      return true;
    case ptev_overflow: {
      TraceGap gap;
      gap.reason = GapReason::kOverflow;
      gap.detail = "trace overflow";
      body = WithIp(gap, has_ip, ev.variant.overflow.ip);
      return true;
    }
    case ptev_exec_mode:
      body = WithIp(ModeChange{ToExecMode(ev.variant.exec_mode.mode)}, has_ip,
                    ev.variant.exec_mode.ip);
      return true;
    case ptev_tsx:
      body = WithIp(MarkerOf(ev.variant.tsx.aborted       ? Marker::Kind::kTsxAbort
                             : ev.variant.tsx.speculative ? Marker::Kind::kTsxBegin
                                                          : Marker::Kind::kTsxCommit),
                    has_ip, ev.variant.tsx.ip);
      return true;
    case ptev_stop:
      body = MarkerOf(Marker::Kind::kTraceStop);
      return true;
    case ptev_exstop:
      body = WithIp(PowerEvent{.kind = PowerEvent::Kind::kExecStop}, has_ip, ev.variant.exstop.ip);
      return true;
    case ptev_mwait:
      body = WithIp(PowerEvent{.kind = PowerEvent::Kind::kMwait,
                               .hints = ev.variant.mwait.hints,
                               .ext = ev.variant.mwait.ext},
                    has_ip, ev.variant.mwait.ip);
      return true;
    case ptev_pwre:
      body = PowerEvent{
          .kind = PowerEvent::Kind::kPowerEntry,
          .value = (static_cast<uint64_t>(ev.variant.pwre.state) << 4) | ev.variant.pwre.sub_state,
          .ext = ev.variant.pwre.hw};  // entered autonomously by the hardware
      return true;
    case ptev_pwrx:
      // Wake reasons: bit 0 interrupt, bit 1 store to the monitored address, bit 2 autonomous.
      body = PowerEvent{
          .kind = PowerEvent::Kind::kPowerExit,
          .value = (static_cast<uint64_t>(ev.variant.pwrx.last) << 4) | ev.variant.pwrx.deepest,
          .hints = static_cast<uint32_t>(ev.variant.pwrx.interrupt | (ev.variant.pwrx.store << 1) |
                                         (ev.variant.pwrx.autonomous << 2))};
      return true;
    case ptev_ptwrite:
      body = WithIp(MarkerOf(Marker::Kind::kPtwrite, ev.variant.ptwrite.payload), has_ip,
                    ev.variant.ptwrite.ip);
      return true;
    case ptev_tick:
      body = WithIp(MarkerOf(Marker::Kind::kTick), has_ip, ev.variant.tick.ip);
      return true;
    case ptev_cbr:
      body = PowerEvent{.kind = PowerEvent::Kind::kCoreBusRatio, .value = ev.variant.cbr.ratio};
      return true;
    case ptev_mnt:
      body = MarkerOf(Marker::Kind::kMaintenance, ev.variant.mnt.payload);
      return true;
  }
  return false;
}

FlowToModel::FlowToModel(EventSink& sink, const PtImageCache& images, FlowModelOptions options)
    : sink_(sink), images_(images), options_(options) {}

EventHeader FlowToModel::Header(uint64_t offset) const {
  EventHeader h;
  h.offset = options_.offset_base + offset;
  h.cpu = options_.cpu;
  h.pid = options_.pid;
  h.tid = options_.tid;
  return h;
}

void FlowToModel::Emit(TraceEvent event) {
  if (!holding_) {
    FlushBlocks();
    counts_.passed += 1;
    sink_.OnEvent(event);
  } else {
    held_after_.push_back(std::move(event));
  }
}

void FlowToModel::FlushBlocks() {
  if (batch_count_ == 0) return;
  // A run whose last block is held goes without it: that block goes in the next batch.
  if (holding_ && batch_run_count_ != 0) {
    BatchRun& last = batch_runs_[batch_run_count_ - 1];
    if (last.at + last.count == batch_blocks_.data() + batch_count_ + 1) {
      last.count -= 1;
      if (last.count < kMinBatchRun) batch_run_count_ -= 1;
    }
  }
  batch_.blocks = std::span<const PackedEvent>(batch_blocks_.data(), batch_count_);
  batch_.runs = std::span<const BatchRun>(batch_runs_.data(), batch_run_count_);
  batch_.run_source = batch_run_count_ ? run_source_ : 0;
  counts_.passed += batch_count_ + batch_ref_blocks_;
  batch_ref_blocks_ = 0;
  sink_.OnBlocks(batch_);
  batch_run_count_ = 0;
  if (holding_) batch_blocks_[0] = held();  // the held block's slot moves to the front
  batch_count_ = 0;
}

bool FlowToModel::JoinsRef(uint8_t end) {
  const RunBlock* source = held_source_;
  held_source_ = nullptr;
  if (batch_count_ == 0 || end != source->end) return false;
  PackedEvent& ref = batch_blocks_[batch_count_ - 1];
  if (!IsRunRef(ref) || RunRefBlocks(ref) == kRunRefMaxBlocks ||
      reinterpret_cast<const RunBlock*>(ref.first_ip_or_index) + RunRefBlocks(ref) != source)
    return false;
  ref.last_insn_size += 1;  // the reference's block count
  ref.insns += source->insns;
  batch_ref_blocks_ += 1;
  return true;
}

bool FlowToModel::WriteRunRef(const RunBlock* blocks, uint32_t n, uint64_t insns, uint64_t tsc,
                              uint64_t first_offset, uint64_t offset, PackedEvent* out) {
  if (!MakeRunRef(blocks, n - 1, insns - blocks[n - 1].insns, tsc, first_offset, offset, out[0]))
    return false;
  StampRunBlock(blocks[n - 1], tsc, offset, out[1]);
  batch_ref_blocks_ += n - 2;
  held_source_ = &blocks[n - 1];
  return true;
}

void FlowToModel::PassWide() {
  // A block whose span does not pack (it wraps, or covers more than 4 GiB): on its own.
  FlushBlocks();
  TraceEvent event{EventHeader{}, ExecBlock{}};
  UnpackBlock(held(), batch_.cpu, batch_.pid, batch_.tid, event);
  std::get<ExecBlock>(event.body).last_ip = held_last_ip_;
  counts_.passed += 1;
  sink_.OnEvent(event);
}

void FlowToModel::Resolve(Next next, uint64_t ip) {
  if (!holding_) return;
  const uint64_t fall_through = held_last_ip_ + held().last_insn_size;
  BlockEnd end = BlockEnd::kUnknown;
  switch (held_kind_) {
    case X86Kind::kOther:
      if (next == Next::kInterrupt) {
        end = BlockEnd::kInterrupt;
      } else if (next == Next::kStop) {
        end = BlockEnd::kTraceStop;
      } else if (next == Next::kFlowAt && ip == fall_through) {
        end = BlockEnd::kFallThrough;
      }
      break;
    case X86Kind::kCondJump:
      end = (next == Next::kFlowAt && ip == fall_through) ? BlockEnd::kCondNotTaken
                                                          : BlockEnd::kCondTaken;
      break;
    default: end = X86KindToBlockEnd(held_kind_); break;
  }
  held().end = static_cast<uint8_t>(end);
  held_source_ = nullptr;
  holding_ = false;
  PassHeld();
  if (held_after_.empty()) return;
  FlushBlocks();
  counts_.passed += held_after_.size();
  for (const TraceEvent& e : held_after_) sink_.OnEvent(e);
  held_after_.clear();
}

const X86Insn* FlowToModel::CachedInsn(int isid, uint64_t ip, const uint8_t* raw, size_t size,
                                       ExecMode mode) {
  CacheEntry* entry = Lookup(isid, ip, mode);
  if (!entry) {
    // Kept in the address's slot, in place of what it held for another section or mode; a new
    // address may first double the table.
    size_t slot = InsnSlot(ip);
    if (!insn_cache_[slot].used) {
      if (2 * (insn_cache_used_ + 1) > insn_cache_.size()) {
        std::vector<CacheEntry> kept(2 * insn_cache_.size());
        kept.swap(insn_cache_);
        for (const CacheEntry& e : kept)
          if (e.used) insn_cache_[InsnSlot(e.ip)] = e;
        slot = InsnSlot(ip);
      }
      ++insn_cache_used_;
    }
    entry = &insn_cache_[slot];
    entry->used = true;
    entry->ip = ip;
    auto decoded = x86_.Decode(raw, size, mode);
    entry->isid = isid;
    entry->mode = mode;
    entry->valid = static_cast<bool>(decoded);
    entry->insn = decoded ? *decoded : X86Insn{};
  }
  return entry->valid ? &entry->insn : nullptr;
}

bool FlowToModel::LastInsn(const pt_block& block, X86Insn& insn) {
  uint8_t raw[pt_max_insn_size];
  ExecMode mode = ToExecMode(block.mode);
  if (block.truncated) {
    // The bytes come from more than one section: decode them every time.
    size_t size = block.size <= sizeof raw ? block.size : 0;
    std::memcpy(raw, block.raw, size);
    auto decoded = x86_.Decode(raw, size, mode);
    if (!decoded) return false;
    insn = *decoded;
    return true;
  }
  if (const CacheEntry* entry = Lookup(block.isid, block.end_ip, mode)) {
    if (!entry->valid) return false;
    insn = entry->insn;
    return true;
  }
  int read = images_.Read(block.isid, block.end_ip, raw, sizeof raw);
  const X86Insn* decoded =
      CachedInsn(block.isid, block.end_ip, raw, read > 0 ? static_cast<size_t>(read) : 0, mode);
  if (!decoded) return false;
  insn = *decoded;
  return true;
}

void FlowToModel::OnEvent(const pt_event& event, uint64_t offset) {
  if (event.status_update) return;
  if (event.type == ptev_async_branch) {
    Resolve(Next::kInterrupt);
    return;
  }
  EventBody body;
  if (!EventToModel(event, body)) return;
  if (event.type == ptev_disabled || event.type == ptev_async_disabled ||
      event.type == ptev_overflow)
    Resolve(Next::kStop);
  if (event.type == ptev_enabled) Resolve(Next::kUnknown);
  TraceEvent out{Header(offset), std::move(body)};
  if (event.has_tsc) out.header.tsc = event.tsc;
  if (std::holds_alternative<TraceGap>(out.body)) counts_.gaps += 1;
  Emit(std::move(out));
}

bool FlowToModel::MergeIntoHeld(const WalkedBlock& block, const X86Insn& known) {
  if (!holding_ || !held_after_.empty() || held_kind_ != X86Kind::kOther) return false;
  PackedEvent& held = this->held();
  if ((held.flags & kPackedTruncated) || held.last_insn_size == 0 ||
      held.mode != static_cast<uint8_t>(ToExecMode(block.mode)) ||
      ((held.flags & kPackedSpeculative) != 0) != block.speculative ||
      held_last_ip_ + held.last_insn_size != block.ip)
    return false;
  held_source_ = nullptr;  // no longer a run's block as stored
  held_last_ip_ = block.end_ip;
  held.insns += block.ninsn;
  held.last_insn_size = known.length;
  held_kind_ = known.kind;
  if (block.has_tsc) held.tsc = block.tsc;
  counts_.insns += block.ninsn;
  return true;
}

void FlowToModel::OnBlock(const pt_block& block, const FlowStep& step) {
  X86Insn decoded;
  const bool known = block.ninsn != 0 && LastInsn(block, decoded);
  WalkedBlock walked;
  walked.ip = block.ip;
  walked.end_ip = block.end_ip;
  walked.ninsn = block.ninsn;
  walked.mode = block.mode;
  walked.isid = block.isid;
  walked.speculative = block.speculative;
  walked.has_tsc = step.tsc.has_value();
  walked.tsc = step.tsc.value_or(0);
  walked.offset = step.offset;
  walked.decoder_offset = step.decoder_offset;
  TakeBlock(walked, block.truncated, known ? &decoded : nullptr);
}

void FlowToModel::OnWalkedBlock(const WalkedBlock& walked) {
  TakeBlock(walked, false, walked.last);
}

void FlowToModel::TakeBlock(const WalkedBlock& block, bool truncated, const X86Insn* known) {
  if (block.ninsn != 0 && known && !truncated && MergeIntoHeld(block, *known)) return;
  Resolve(Next::kFlowAt, block.ip);
  if (block.ninsn == 0) return;
  Hold(block.ip, block.end_ip, block.ninsn, known ? known->length : 0,
       known ? known->kind : X86Kind::kOther, ToExecMode(block.mode), block.speculative,
       truncated, block.offset, block.has_tsc, block.tsc);
}

void FlowToModel::OnInsn(const pt_insn& insn, const FlowStep& step) {
  Resolve(Next::kFlowAt, insn.ip);
  Instruction i;
  i.ip = insn.ip;
  i.size = insn.size;
  std::memcpy(i.bytes, insn.raw, std::min<size_t>(insn.size, sizeof i.bytes));
  i.mode = ToExecMode(insn.mode);
  i.speculative = insn.speculative;
  const X86Insn* decoded = CachedInsn(insn.isid, insn.ip, insn.raw, insn.size, i.mode);
  i.iclass = decoded ? X86KindToBlockEnd(decoded->kind) : BlockEnd::kUnknown;
  TraceEvent event{Header(step.offset), i};
  if (step.tsc) event.header.tsc = *step.tsc;
  counts_.insns += 1;
  Emit(std::move(event));
}

void FlowToModel::OnError(const FlowError& error) {
  Resolve(Next::kStop);
  TraceGap gap;
  gap.reason = ReasonOf(error.code);
  gap.code = error.code;
  gap.detail = std::string(error.kind == FlowError::Kind::kSync ? "sync error: " : "") +
               pt_errstr(pt_errcode(error.code));
  gap.has_ip = error.ip != 0;
  gap.ip = error.ip;
  counts_.gaps += 1;
  Emit(TraceEvent{Header(error.offset.value_or(0)), gap});
}

void FlowToModel::SwitchTask(int32_t pid, int32_t tid, uint64_t offset,
                             std::optional<uint64_t> tsc) {
  options_.pid = pid;
  options_.tid = tid;
  ContextSwitch change;
  change.kind = ContextSwitch::Kind::kSideband;
  change.next_pid = pid;
  change.next_tid = tid;
  TraceEvent event{Header(offset), change};
  if (tsc) event.header.tsc = *tsc;
  Emit(std::move(event));
}

void FlowToModel::OnEndOfTrace() { Resolve(Next::kStop); }

const BlockEnd FlowToModel::kEndOfKind[] = {
    X86KindToBlockEnd(X86Kind::kOther),    X86KindToBlockEnd(X86Kind::kCallNear),
    X86KindToBlockEnd(X86Kind::kCallFar),  X86KindToBlockEnd(X86Kind::kRetNear),
    X86KindToBlockEnd(X86Kind::kRetFar),   X86KindToBlockEnd(X86Kind::kJumpNear),
    X86KindToBlockEnd(X86Kind::kJumpFar),  X86KindToBlockEnd(X86Kind::kCondJump),
    X86KindToBlockEnd(X86Kind::kSyscall),  X86KindToBlockEnd(X86Kind::kSysret),
    X86KindToBlockEnd(X86Kind::kInterrupt), X86KindToBlockEnd(X86Kind::kIret),
    X86KindToBlockEnd(X86Kind::kVmCall),   X86KindToBlockEnd(X86Kind::kVmEntry),
};

void FlowToModel::Finish() {
  Resolve(Next::kStop);
  FlushBlocks();
}

}  // namespace ptprof::pt
