#include "decoders/pt/packet_reader.h"

#include <intel-pt.h>

#include "decoders/pt/packet_config.h"

namespace ptprof::pt {

struct PacketReader::State {
  pt_config config;
  pt_packet_decoder* decoder = nullptr;
  int errata_error = 0;

  ~State() { pt_pkt_free_decoder(decoder); }
};

std::string PtErrorMessage(int code) {
  const char* text = pt_errstr(pt_errcode(code));
  return text ? text : "unknown error";
}

namespace {

ReadStatus Classify(int status, uint64_t offset, DecodeError& error) {
  if (status >= 0) return ReadStatus::kOk;
  if (status == -pte_eos) return ReadStatus::kEnd;
  error.offset = offset;
  error.code = status;
  error.message = PtErrorMessage(status);
  return ReadStatus::kError;
}

IpPayload ToIp(const pt_packet_ip& ip) {
  return {static_cast<IpCompression>(ip.ipc), ip.ip};
}

// `in` as a Packet in `out`, every field not of its kind at its default.
void ToPacket(const pt_packet& in, Packet& out) {
  // Copied from a default Packet the compiler cannot see into rather than value-initialised: a
  // packet is read tens of millions of times, and a fresh one was zeroed with `rep stos`, which
  // costs more for its 160 bytes than the rest of the conversion (a copy is a few vector moves).
  static Packet defaults;  // never written
  out = defaults;
  out.size = in.size;
  const auto& p = in.payload;
  switch (in.type) {
    case ppt_invalid: out.kind = PacketKind::kInvalid; break;
    case ppt_unknown: out.kind = PacketKind::kUnknown; break;
    case ppt_pad: out.kind = PacketKind::kPad; break;
    case ppt_psb: out.kind = PacketKind::kPsb; break;
    case ppt_psbend: out.kind = PacketKind::kPsbEnd; break;
    case ppt_fup: out.kind = PacketKind::kFup; out.ip = ToIp(p.ip); break;
    case ppt_tip: out.kind = PacketKind::kTip; out.ip = ToIp(p.ip); break;
    case ppt_tip_pge: out.kind = PacketKind::kTipPge; out.ip = ToIp(p.ip); break;
    case ppt_tip_pgd: out.kind = PacketKind::kTipPgd; out.ip = ToIp(p.ip); break;
    case ppt_tnt_8:
    case ppt_tnt_64:
      out.kind = in.type == ppt_tnt_8 ? PacketKind::kTnt8 : PacketKind::kTnt64;
      out.tnt = {p.tnt.bit_size, p.tnt.payload};
      break;
    case ppt_mode:
      out.kind = PacketKind::kMode;
      out.mode.leaf = static_cast<uint8_t>(p.mode.leaf);
      if (p.mode.leaf == pt_mol_exec) {
        out.mode.csl = p.mode.bits.exec.csl;
        out.mode.csd = p.mode.bits.exec.csd;
      } else if (p.mode.leaf == pt_mol_tsx) {
        out.mode.intx = p.mode.bits.tsx.intx;
        out.mode.abrt = p.mode.bits.tsx.abrt;
      }
      break;
    case ppt_pip:
      out.kind = PacketKind::kPip;
      out.cr3 = p.pip.cr3;
      out.pip_nr = p.pip.nr;
      break;
    case ppt_vmcs: out.kind = PacketKind::kVmcs; out.vmcs_base = p.vmcs.base; break;
    case ppt_cbr: out.kind = PacketKind::kCbr; out.cbr_ratio = p.cbr.ratio; break;
    case ppt_tsc: out.kind = PacketKind::kTsc; out.tsc = p.tsc.tsc; break;
    case ppt_tma:
      out.kind = PacketKind::kTma;
      out.tma_ctc = p.tma.ctc;
      out.tma_fc = p.tma.fc;
      break;
    case ppt_mtc: out.kind = PacketKind::kMtc; out.mtc_ctc = p.mtc.ctc; break;
    case ppt_cyc: out.kind = PacketKind::kCyc; out.cyc = p.cyc.value; break;
    case ppt_stop: out.kind = PacketKind::kStop; break;
    case ppt_ovf: out.kind = PacketKind::kOvf; break;
    case ppt_mnt: out.kind = PacketKind::kMnt; out.mnt = p.mnt.payload; break;
    case ppt_exstop: out.kind = PacketKind::kExstop; out.exstop_ip = p.exstop.ip; break;
    case ppt_mwait:
      out.kind = PacketKind::kMwait;
      out.mwait_hints = p.mwait.hints;
      out.mwait_ext = p.mwait.ext;
      break;
    case ppt_pwre:
      out.kind = PacketKind::kPwre;
      out.pwre = {p.pwre.state, p.pwre.sub_state, p.pwre.hw != 0};
      break;
    case ppt_pwrx:
      out.kind = PacketKind::kPwrx;
      out.pwrx = {p.pwrx.last, p.pwrx.deepest, p.pwrx.interrupt != 0, p.pwrx.store != 0,
                  p.pwrx.autonomous != 0};
      break;
    case ppt_ptw:
      out.kind = PacketKind::kPtw;
      out.ptw = {p.ptw.plc, p.ptw.payload, p.ptw.ip != 0};
      break;
  }
}

}  // namespace

PacketReader::PacketReader(std::span<const uint8_t> trace, std::unique_ptr<State> state)
    : trace_(trace), state_(std::move(state)) {}
PacketReader::PacketReader(PacketReader&&) noexcept = default;
PacketReader& PacketReader::operator=(PacketReader&&) noexcept = default;
PacketReader::~PacketReader() = default;

Result<PacketReader> PacketReader::Create(std::span<const uint8_t> trace, const PtParams& params) {
  if (trace.empty()) return Fail("offset 0x0: empty trace");
  auto state = std::make_unique<State>();
  state->config = MakePtConfig(trace, params, &state->errata_error);
  state->decoder = pt_pkt_alloc_decoder(&state->config);
  if (!state->decoder) return Fail("offset 0x0: libipt rejected the packet decoder configuration");
  return PacketReader(trace, std::move(state));
}

ReadStatus PacketReader::SyncForward(DecodeError& error) {
  return Classify(pt_pkt_sync_forward(state_->decoder), Offset(), error);
}

ReadStatus PacketReader::SyncSet(uint64_t offset, DecodeError& error) {
  return Classify(pt_pkt_sync_set(state_->decoder, offset), offset, error);
}

int PacketReader::ErrataError() const { return state_->errata_error; }

uint64_t PacketReader::Offset() const {
  uint64_t offset = 0;
  pt_pkt_get_offset(state_->decoder, &offset);
  return offset;
}

ReadStatus PacketReader::Next(Packet& packet, uint64_t& offset, DecodeError& error) {
  offset = Offset();
  pt_packet raw;
  const int status = pt_pkt_next(state_->decoder, &raw, sizeof raw);
  const ReadStatus result = Classify(status, offset, error);
  if (result == ReadStatus::kOk) ToPacket(raw, packet);
  return result;
}

}  // namespace ptprof::pt
