#include "decoders/pt/packet.h"

#include <fmt/format.h>

namespace ptprof::pt {

bool HasIpPayload(PacketKind kind) {
  return kind == PacketKind::kFup || kind == PacketKind::kTip || kind == PacketKind::kTipPge ||
         kind == PacketKind::kTipPgd;
}

ExecMode ExecModeOf(const ModePayload& mode) {
  if (mode.csl) return mode.csd ? ExecMode::kUnknown : ExecMode::k64Bit;
  return mode.csd ? ExecMode::k32Bit : ExecMode::k16Bit;
}

uint64_t SignExtend(uint64_t value, unsigned bits) {
  if (bits == 0 || bits >= 64) return value;
  const uint64_t sign = uint64_t{1} << (bits - 1);
  const uint64_t high = ~uint64_t{0} << bits;
  return (value & sign) ? (value | high) : (value & ~high);
}

std::string PacketName(const Packet& packet) {
  switch (packet.kind) {
    case PacketKind::kInvalid: return "<invalid>";
    case PacketKind::kUnknown: return "<unknown>";
    case PacketKind::kPad: return "pad";
    case PacketKind::kPsb: return "psb";
    case PacketKind::kPsbEnd: return "psbend";
    case PacketKind::kFup: return "fup";
    case PacketKind::kTip: return "tip";
    case PacketKind::kTipPge: return "tip.pge";
    case PacketKind::kTipPgd: return "tip.pgd";
    case PacketKind::kTnt8: return "tnt.8";
    case PacketKind::kTnt64: return "tnt.64";
    case PacketKind::kMode:
      if (packet.mode.leaf == kModeLeafExec) return "mode.exec";
      if (packet.mode.leaf == kModeLeafTsx) return "mode.tsx";
      return "mode";
    case PacketKind::kPip: return "pip";
    case PacketKind::kVmcs: return "vmcs";
    case PacketKind::kCbr: return "cbr";
    case PacketKind::kTsc: return "tsc";
    case PacketKind::kTma: return "tma";
    case PacketKind::kMtc: return "mtc";
    case PacketKind::kCyc: return "cyc";
    case PacketKind::kStop: return "stop";
    case PacketKind::kOvf: return "ovf";
    case PacketKind::kMnt: return "mnt";
    case PacketKind::kExstop: return "exstop";
    case PacketKind::kMwait: return "mwait";
    case PacketKind::kPwre: return "pwre";
    case PacketKind::kPwrx: return "pwrx";
    case PacketKind::kPtw: return "ptw";
  }
  return "<invalid>";
}

namespace {

std::string IpText(const IpPayload& ip) {
  const unsigned ipc = static_cast<unsigned>(ip.ipc);
  switch (ip.ipc) {
    case IpCompression::kSuppressed: return fmt::format("{:x}: ????????????????", ipc);
    case IpCompression::kUpdate16: return fmt::format("{:x}: ????????????{:04x}", ipc, ip.ip);
    case IpCompression::kUpdate32: return fmt::format("{:x}: ????????{:08x}", ipc, ip.ip);
    case IpCompression::kUpdate48: return fmt::format("{:x}: ????{:012x}", ipc, ip.ip);
    case IpCompression::kSignExtend48:
      return fmt::format("{:x}: {:016x}", ipc, SignExtend(ip.ip, 48));
    case IpCompression::kFull: break;
  }
  return fmt::format("{:x}: {:016x}", ipc, ip.ip);
}

std::string TntText(const TntPayload& tnt) {
  std::string text;
  for (unsigned bit = tnt.bit_count; bit > 0; --bit)
    text += ((tnt.bits >> (bit - 1)) & 1) ? '!' : '.';
  return text;
}

// Joins the names of the set flags with ", " (the way ptdump lists mode bits).
std::string Flags(bool first, const char* first_name, bool second, const char* second_name) {
  std::string text = first ? first_name : "";
  if (second) {
    if (!text.empty()) text += ", ";
    text += second_name;
  }
  return text;
}

// The wake reason of a PWRX packet; exactly one reason is expected.
const char* WakeReason(const PowerExitPayload& pwrx) {
  const int reasons = int{pwrx.interrupt} + int{pwrx.store} + int{pwrx.autonomous};
  if (reasons != 1) return "bad";
  if (pwrx.interrupt) return "int";
  // ptdump prints these two with a leading blank.
  return pwrx.store ? " st" : " hw";
}

}  // namespace

std::string PacketPayloadText(const Packet& packet) {
  switch (packet.kind) {
    case PacketKind::kFup:
    case PacketKind::kTip:
    case PacketKind::kTipPge:
    case PacketKind::kTipPgd: return IpText(packet.ip);
    case PacketKind::kTnt8:
    case PacketKind::kTnt64: return TntText(packet.tnt);
    case PacketKind::kMode:
      if (packet.mode.leaf == kModeLeafExec)
        return Flags(packet.mode.csd, "cs.d", packet.mode.csl, "cs.l");
      if (packet.mode.leaf == kModeLeafTsx)
        return Flags(packet.mode.intx, "intx", packet.mode.abrt, "abrt");
      return fmt::format("leaf: {:x}", packet.mode.leaf);
    case PacketKind::kPip: return fmt::format("{:x}{}", packet.cr3, packet.pip_nr ? ", nr" : "");
    case PacketKind::kVmcs: return fmt::format("{:x}", packet.vmcs_base);
    case PacketKind::kCbr: return fmt::format("{:x}", packet.cbr_ratio);
    case PacketKind::kTsc: return fmt::format("{:x}", packet.tsc);
    case PacketKind::kTma: return fmt::format("{:x}, {:x}", packet.tma_ctc, packet.tma_fc);
    case PacketKind::kMtc: return fmt::format("{:x}", packet.mtc_ctc);
    case PacketKind::kCyc: return fmt::format("{:x}", packet.cyc);
    case PacketKind::kMnt: return fmt::format("{:x}", packet.mnt);
    case PacketKind::kExstop: return packet.exstop_ip ? "ip" : "";
    case PacketKind::kMwait:
      return fmt::format("{:08x}, {:08x}", packet.mwait_hints, packet.mwait_ext);
    case PacketKind::kPwre:
      return fmt::format("c{}.{}{}", (packet.pwre.state + 1) & 0xf,
                         (packet.pwre.sub_state + 1) & 0xf, packet.pwre.hw ? ", hw" : "");
    case PacketKind::kPwrx:
      return fmt::format("{}: c{}, c{}", WakeReason(packet.pwrx), (packet.pwrx.last + 1) & 0xf,
                         (packet.pwrx.deepest + 1) & 0xf);
    case PacketKind::kPtw:
      return fmt::format("{:x}: {:x}{}", packet.ptw.plc, packet.ptw.payload,
                         packet.ptw.ip ? ", ip" : "");
    default: break;
  }
  return {};
}

}  // namespace ptprof::pt
