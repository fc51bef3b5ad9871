#include "decoders/pt/trace_encoder.h"

#include <algorithm>
#include <cstring>
#include <string>

#include <intel-pt.h>

namespace ptprof::pt {

namespace {

constexpr uint8_t kMaxTnt8Bits = 6;    // a TNT-8 packet holds up to 6 branch outcomes
constexpr uint8_t kMaxTnt64Bits = 47;  // a TNT-64 packet up to 47

bool IsSext48(uint64_t ip) {
  uint64_t top = ip >> 47;
  return top == 0 || top == 0x1ffff;
}

Status EncoderError(const char* what, int code) {
  return Fail(std::string("PT encoder: ") + what + ": " + pt_errstr(pt_errcode(code)));
}

pt_exec_mode ToPtMode(ExecMode mode) {
  switch (mode) {
    case ExecMode::k16Bit: return ptem_16bit;
    case ExecMode::k32Bit: return ptem_32bit;
    default: return ptem_64bit;
  }
}

}  // namespace

// libipt's encoder writes into a fixed buffer; each packet is encoded into a scratch buffer and
// appended to the growing output.
struct TraceEncoder::Impl {
  uint8_t scratch[64] = {};
  pt_encoder* encoder = nullptr;

  Impl() {
    pt_config config;
    pt_config_init(&config);
    config.begin = scratch;
    config.end = scratch + sizeof scratch;
    encoder = pt_alloc_encoder(&config);
  }
  ~Impl() { pt_free_encoder(encoder); }
};

TraceEncoder::TraceEncoder(EncoderOptions options)
    : options_(options), impl_(std::make_unique<Impl>()) {}

TraceEncoder::~TraceEncoder() = default;

Status TraceEncoder::Emit(const void* packet_ptr) {
  auto* packet = static_cast<pt_packet*>(const_cast<void*>(packet_ptr));
  if (!impl_->encoder) return Fail("PT encoder: allocation failed");
  int status = pt_enc_sync_set(impl_->encoder, 0);
  if (status < 0) return EncoderError("reset", status);
  status = pt_enc_next(impl_->encoder, packet);
  if (status < 0) return EncoderError("packet", status);
  out_.insert(out_.end(), impl_->scratch, impl_->scratch + status);
  ++stats_.packets;
  return {};
}

Status TraceEncoder::EmitIp(int type, uint64_t ip, bool suppressed) {
  if (auto s = MaybeCyc(); !s) return s;
  pt_packet packet;
  std::memset(&packet, 0, sizeof packet);
  packet.type = static_cast<pt_packet_type>(type);
  if (suppressed) {
    packet.payload.ip.ipc = pt_ipc_suppressed;
  } else {
    // The encoder does not track the last IP: choose the compression here (FACTS.md).
    pt_ip_compression ipc;
    if (have_last_ip_ && (ip >> 16) == (last_ip_ >> 16)) {
      ipc = pt_ipc_update_16;
    } else if (have_last_ip_ && (ip >> 32) == (last_ip_ >> 32)) {
      ipc = pt_ipc_update_32;
    } else if (IsSext48(ip)) {
      ipc = pt_ipc_sext_48;
    } else if (have_last_ip_ && (ip >> 48) == (last_ip_ >> 48)) {
      ipc = pt_ipc_update_48;
    } else {
      ipc = pt_ipc_full;
    }
    packet.payload.ip.ipc = ipc;
    packet.payload.ip.ip = ip;
    last_ip_ = ip;
    have_last_ip_ = true;
  }
  return Emit(&packet);
}

Status TraceEncoder::MaybeCyc() {
  if (!options_.emit_cyc || now_ <= last_cyc_) return {};
  const uint64_t cycles = now_ - last_cyc_;
  const uint64_t threshold =
      options_.cyc_threshold == 0 ? 1 : (uint64_t{1} << (options_.cyc_threshold - 1));
  if (cycles < threshold) return {};
  pt_packet packet;
  std::memset(&packet, 0, sizeof packet);
  packet.type = ppt_cyc;
  packet.payload.cyc.value = cycles;
  last_cyc_ = now_;
  ++stats_.cycs;
  return Emit(&packet);
}

Status TraceEncoder::Tick(uint64_t tsc) {
  now_ = tsc;
  if (!options_.emit_mtc) return {};
  const uint64_t period = (tsc / options_.tsc_per_ctc) >> options_.mtc_freq;
  if (period == last_mtc_period_) return {};
  last_mtc_period_ = period;
  // Outcomes before the tick belong to the time before it.
  if (auto s = FlushTnt(); !s) return s;
  if (auto s = MaybeCyc(); !s) return s;
  pt_packet packet;
  std::memset(&packet, 0, sizeof packet);
  packet.type = ppt_mtc;
  packet.payload.mtc.ctc = static_cast<uint8_t>(period);
  ++stats_.mtcs;
  return Emit(&packet);
}

Status TraceEncoder::FlushTnt() {
  if (tnt_count_ == 0) return {};  // never an empty TNT: it encodes as the extended opcode
  if (auto s = MaybeCyc(); !s) return s;
  pt_packet packet;
  std::memset(&packet, 0, sizeof packet);
  packet.type = tnt_count_ > kMaxTnt8Bits ? ppt_tnt_64 : ppt_tnt_8;
  packet.payload.tnt.bit_size = tnt_count_;
  packet.payload.tnt.payload = tnt_bits_;
  tnt_bits_ = 0;
  tnt_count_ = 0;
  return Emit(&packet);
}

Status TraceEncoder::AddTntBit(bool taken) {
  // The oldest outcome ends up in the most significant payload bit.
  tnt_bits_ = (tnt_bits_ << 1) | (taken ? 1 : 0);
  ++tnt_count_;
  ++stats_.tnt_bits;
  if (tnt_count_ == (options_.tnt64 ? kMaxTnt64Bits : kMaxTnt8Bits)) return FlushTnt();
  return {};
}

void TraceEncoder::PushReturn(uint64_t ip) {
  ret_top_ = static_cast<uint8_t>((ret_top_ + 1) % 64);
  ret_stack_[ret_top_] = ip;
  if (ret_depth_ < 64) ++ret_depth_;
}

Status TraceEncoder::EmitPsbPlus(uint64_t ip, uint64_t tsc) {
  if (auto s = FlushTnt(); !s) return s;
  pt_packet packet;
  std::memset(&packet, 0, sizeof packet);
  packet.type = ppt_psb;
  if (auto s = Emit(&packet); !s) return s;
  have_last_ip_ = false;  // a PSB resets IP compression
  // Return compression restarts at every PSB so that each PSB segment decodes on its own.
  ret_depth_ = 0;
  if (options_.emit_tsc) {
    std::memset(&packet, 0, sizeof packet);
    packet.type = ppt_tsc;
    packet.payload.tsc.tsc = tsc;
    if (auto s = Emit(&packet); !s) return s;
    if (options_.emit_timing && options_.emit_mtc) {
      std::memset(&packet, 0, sizeof packet);
      packet.type = ppt_tma;
      packet.payload.tma.ctc = static_cast<uint16_t>(tsc / options_.tsc_per_ctc);
      packet.payload.tma.fc = static_cast<uint16_t>(tsc % options_.tsc_per_ctc);
      if (auto s = Emit(&packet); !s) return s;
    }
  }
  if (options_.emit_timing) {
    std::memset(&packet, 0, sizeof packet);
    packet.type = ppt_cbr;
    packet.payload.cbr.ratio = options_.cbr;
    if (auto s = Emit(&packet); !s) return s;
  }
  now_ = last_cyc_ = tsc;
  last_mtc_period_ = (tsc / options_.tsc_per_ctc) >> options_.mtc_freq;
  if (enabled_) {
    std::memset(&packet, 0, sizeof packet);
    packet.type = ppt_mode;
    packet.payload.mode.leaf = pt_mol_exec;
    packet.payload.mode.bits.exec = pt_set_exec_mode(ToPtMode(mode_));
    if (auto s = Emit(&packet); !s) return s;
    if (auto s = EmitIp(ppt_fup, ip, false); !s) return s;
  }
  std::memset(&packet, 0, sizeof packet);
  packet.type = ppt_psbend;
  if (auto s = Emit(&packet); !s) return s;
  bytes_at_last_psb_ = out_.size();
  ++stats_.psbs;
  return {};
}

Status TraceEncoder::Begin(uint64_t ip, ExecMode mode, uint64_t tsc) {
  mode_ = mode;
  fresh_ = false;
  enabled_ = false;
  next_ip_ = ip;
  if (auto s = EmitPsbPlus(ip, tsc); !s) return s;
  pt_packet packet;
  std::memset(&packet, 0, sizeof packet);
  packet.type = ppt_mode;
  packet.payload.mode.leaf = pt_mol_exec;
  packet.payload.mode.bits.exec = pt_set_exec_mode(ToPtMode(mode_));
  if (auto s = Emit(&packet); !s) return s;
  if (auto s = EmitIp(ppt_tip_pge, ip, false); !s) return s;
  enabled_ = true;
  return {};
}

Status TraceEncoder::Step(const ExecutedInsn& insn, uint64_t tsc) {
  if (fresh_) return Begin(insn.ip, mode_, tsc).and_then([&] { return Step(insn, tsc); });
  if (options_.emit_mtc) {
    if (auto s = Tick(tsc); !s) return s;
  } else {
    now_ = tsc;  // Tick without MTC (the common case, without the call)
  }
  if (!enabled_) {
    // Execution came back to traced code (after a syscall): tracing resumes here.
    if (auto s = EmitIp(ppt_tip_pge, insn.ip, false); !s) return s;
    enabled_ = true;
  }
  if (out_.size() - bytes_at_last_psb_ >= options_.psb_period) {
    if (auto s = EmitPsbPlus(insn.ip, tsc); !s) return s;
  }
  ++stats_.insns;
  next_ip_ = insn.next_ip;
  uint64_t fall_through = insn.ip + insn.size;
  switch (insn.kind) {
    case BranchKind::kNone:
      if (insn.next_ip != fall_through) {
        // An asynchronous transfer (signal, fault): FUP names where execution would have gone.
        if (auto s = FlushTnt(); !s) return s;
        if (auto s = EmitIp(ppt_fup, fall_through, false); !s) return s;
        if (auto s = EmitIp(ppt_tip, insn.next_ip, false); !s) return s;
        ++stats_.async_branches;
      }
      return {};
    case BranchKind::kCondJump:
      return AddTntBit(insn.next_ip != fall_through);
    case BranchKind::kDirectJump:
      return {};
    case BranchKind::kDirectCall:
      PushReturn(fall_through);
      return {};
    case BranchKind::kIndirectCall:
      PushReturn(fall_through);
      [[fallthrough]];
    case BranchKind::kIndirectJump:
    case BranchKind::kFarTransfer:
      if (auto s = FlushTnt(); !s) return s;
      ++stats_.tips;
      return EmitIp(ppt_tip, insn.next_ip, false);
    case BranchKind::kReturn:
      if (options_.return_compression && ret_depth_ > 0 && ret_stack_[ret_top_] == insn.next_ip) {
        ret_top_ = static_cast<uint8_t>((ret_top_ + 63) % 64);
        --ret_depth_;
        return AddTntBit(true);
      }
      if (auto s = FlushTnt(); !s) return s;
      ++stats_.tips;
      return EmitIp(ppt_tip, insn.next_ip, false);
    case BranchKind::kSyscall:
      // User-only tracing: the kernel part is not traced; the decoder sees tracing disabled at the
      // syscall and enabled again at the instruction after it.
      if (auto s = FlushTnt(); !s) return s;
      enabled_ = false;
      return EmitIp(ppt_tip_pgd, 0, true);
  }
  return {};
}

Status TraceEncoder::AsyncBranch(uint64_t from, uint64_t to, uint64_t tsc) {
  if (fresh_ || !enabled_) return {};  // nothing traced yet: the next Step starts at `to`
  if (auto s = Tick(tsc); !s) return s;
  if (auto s = FlushTnt(); !s) return s;
  if (auto s = EmitIp(ppt_fup, from, false); !s) return s;
  ++stats_.async_branches;
  next_ip_ = to;
  return EmitIp(ppt_tip, to, false);
}

Status TraceEncoder::Overflow(uint64_t resume_ip, uint64_t tsc) {
  if (fresh_) return {};  // a new stream starts with PSB+ anyway
  // Outcomes recorded before the loss were written before it.
  if (auto s = FlushTnt(); !s) return s;
  now_ = tsc;
  pt_packet packet;
  std::memset(&packet, 0, sizeof packet);
  packet.type = ppt_ovf;
  if (auto s = Emit(&packet); !s) return s;
  ++stats_.overflows;
  have_last_ip_ = false;
  ret_depth_ = 0;
  next_ip_ = resume_ip;
  if (!enabled_) return {};  // the next Step's TIP.PGE says where tracing resumes
  return EmitIp(ppt_fup, resume_ip, false);
}

std::vector<uint8_t> TraceEncoder::TakeBytes() {
  std::vector<uint8_t> taken;
  taken.swap(out_);
  bytes_at_last_psb_ = 0;
  tnt_bits_ = 0;
  tnt_count_ = 0;
  enabled_ = false;
  fresh_ = true;
  return taken;
}

void TraceEncoder::DropPrefix(size_t n) {
  n = std::min(n, out_.size());
  out_.erase(out_.begin(), out_.begin() + static_cast<std::ptrdiff_t>(n));
  bytes_at_last_psb_ = bytes_at_last_psb_ > n ? bytes_at_last_psb_ - n : 0;
}

Status TraceEncoder::End() {
  if (fresh_) return {};
  if (auto s = FlushTnt(); !s) return s;
  if (!enabled_) return {};
  // Tracing stops asynchronously: FUP names the instruction that would have run next.
  enabled_ = false;
  if (auto s = EmitIp(ppt_fup, next_ip_, false); !s) return s;
  return EmitIp(ppt_tip_pgd, 0, true);
}

}  // namespace ptprof::pt
