#include "decoders/pt/fast/packet_scan.h"

#include <cstring>

namespace ptprof::pt::fast {

namespace {

// Second bytes after the extended opcode (Intel SDM Vol. 3C, "Intel Processor Trace", packet
// definitions; the first bytes are in packet_scan.h).
constexpr uint8_t kExtPsb = 0x82;
constexpr uint8_t kExtTnt64 = 0xa3;
constexpr uint8_t kExtPip = 0x43;
constexpr uint8_t kExtOvf = 0xf3;
constexpr uint8_t kExtPsbEnd = 0x23;
constexpr uint8_t kExtCbr = 0x03;
constexpr uint8_t kExtTma = 0x73;
constexpr uint8_t kExtStop = 0x83;
constexpr uint8_t kExtVmcs = 0xc8;
constexpr uint8_t kExtExt2 = 0xc3;
constexpr uint8_t kExtExstop = 0x62;
constexpr uint8_t kExtExstopIp = 0xe2;
constexpr uint8_t kExtMwait = 0xc2;
constexpr uint8_t kExtPwre = 0x22;
constexpr uint8_t kExtPwrx = 0xa2;
constexpr uint8_t kExt2Mnt = 0x88;

// Little-endian value of `size` bytes.
uint64_t ReadLe(const uint8_t* pos, int size) {
  uint64_t value = 0;
  for (int i = 0; i < size; ++i) value |= static_cast<uint64_t>(pos[i]) << (8 * i);
  return value;
}

// The TNT payload with its stop bit: the bits below the highest set bit, oldest first.
int ReadTnt(uint64_t payload, TntPayload& tnt) {
  if (payload <= 1) return -pte_bad_packet;  // no stop bit above a payload bit
  const int stop = 63 - __builtin_clzll(payload);
  tnt.bit_count = static_cast<uint8_t>(stop);
  tnt.bits = payload & ~(uint64_t{1} << stop);
  return 0;
}

}  // namespace

bool ReadInPsbHeader(PacketKind kind) {
  switch (kind) {
    case PacketKind::kUnknown:
    case PacketKind::kPad:
    case PacketKind::kFup:
    case PacketKind::kPip:
    case PacketKind::kMode:
    case PacketKind::kTsc:
    case PacketKind::kCbr:
    case PacketKind::kTma:
    case PacketKind::kMtc:
    case PacketKind::kCyc:
    case PacketKind::kVmcs:
    case PacketKind::kMnt: return true;
    default: return false;
  }
}

int FetchKind(const uint8_t* pos, const uint8_t* begin, const uint8_t* end, PacketKind& kind) {
  kind = PacketKind::kInvalid;
  if (!pos || pos < begin || end < pos) return -pte_nosync;
  if (pos == end) return -pte_eos;
  kind = kOneByteKinds[*pos++];
  if (kind != PacketKind::kInvalid) return 0;
  // The extended opcode: the second byte says.
  if (pos == end) return -pte_eos;
  const uint8_t ext = *pos++;
  switch (ext) {
    case kExtPsb: kind = PacketKind::kPsb; return 0;
    case kExtOvf: kind = PacketKind::kOvf; return 0;
    case kExtTnt64: kind = PacketKind::kTnt64; return 0;
    case kExtPsbEnd: kind = PacketKind::kPsbEnd; return 0;
    case kExtCbr: kind = PacketKind::kCbr; return 0;
    case kExtPip: kind = PacketKind::kPip; return 0;
    case kExtTma: kind = PacketKind::kTma; return 0;
    case kExtStop: kind = PacketKind::kStop; return 0;
    case kExtVmcs: kind = PacketKind::kVmcs; return 0;
    case kExtExstop:
    case kExtExstopIp: kind = PacketKind::kExstop; return 0;
    case kExtMwait: kind = PacketKind::kMwait; return 0;
    case kExtPwre: kind = PacketKind::kPwre; return 0;
    case kExtPwrx: kind = PacketKind::kPwrx; return 0;
    case kExtExt2:
      if (pos == end) return -pte_eos;
      kind = *pos == kExt2Mnt ? PacketKind::kMnt : PacketKind::kUnknown;
      return 0;
    default:
      kind = (ext & 0x1f) == 0x12 ? PacketKind::kPtw : PacketKind::kUnknown;
      return 0;
  }
}

int ReadPsb(const uint8_t* pos, const uint8_t* end) {
  if (end - pos < kPsbSize) return -pte_eos;
  for (int i = 2; i < kPsbSize; i += 2) {
    if (pos[i] != kOpExt || pos[i + 1] != kExtPsb) return -pte_bad_packet;
  }
  return kPsbSize;
}

pt_exec_mode ExecModeOfPayload(const ModePayload& mode) {
  if (mode.csl) return mode.csd ? ptem_unknown : ptem_64bit;
  return mode.csd ? ptem_32bit : ptem_16bit;
}

int ReadPacket(PacketKind kind, const uint8_t* pos, const uint8_t* end, Packet& packet) {
  packet.kind = kind;
  const auto fits = [&](int size) { return end - pos >= size; };
  switch (kind) {
    case PacketKind::kPad: return packet.size = 1;
    case PacketKind::kPsb: {
      const int size = ReadPsb(pos, end);
      if (size > 0) packet.size = static_cast<uint8_t>(size);
      return size;
    }
    case PacketKind::kPsbEnd:
    case PacketKind::kOvf:
    case PacketKind::kStop: return packet.size = 2;
    case PacketKind::kTip:
    case PacketKind::kTipPge:
    case PacketKind::kTipPgd:
    case PacketKind::kFup: {
      const uint8_t ipc = pos[0] >> 5;
      const int size = IpPayloadSize(ipc);
      if (size < 0) return size;
      if (!fits(1 + size)) return -pte_eos;
      packet.ip.ipc = static_cast<IpCompression>(ipc);
      packet.ip.ip = size ? ReadLe(pos + 1, size) : 0;
      return packet.size = static_cast<uint8_t>(1 + size);
    }
    case PacketKind::kTnt8: {
      const int status = ReadTnt(pos[0] >> 1, packet.tnt);
      if (status < 0) return status;
      return packet.size = 1;
    }
    case PacketKind::kTnt64: {
      if (!fits(8)) return -pte_eos;
      const int status = ReadTnt(ReadLe(pos + 2, 6), packet.tnt);
      if (status < 0) return status;
      return packet.size = 8;
    }
    case PacketKind::kPip: {
      if (!fits(8)) return -pte_eos;
      const uint64_t payload = ReadLe(pos + 2, 6);
      packet.pip_nr = (payload & 1) != 0;
      packet.cr3 = (payload >> 1) << 5;
      return packet.size = 8;
    }
    case PacketKind::kMode: {
      if (!fits(2)) return -pte_eos;
      const uint8_t payload = pos[1];
      const uint8_t leaf = payload & 0xe0;
      if (leaf != kModeLeafExec && leaf != kModeLeafTsx) return -pte_bad_packet;
      packet.mode = ModePayload{};
      packet.mode.leaf = leaf;
      if (leaf == kModeLeafExec) {
        packet.mode.csl = (payload & 0x01) != 0;
        packet.mode.csd = (payload & 0x02) != 0;
      } else {
        packet.mode.intx = (payload & 0x01) != 0;
        packet.mode.abrt = (payload & 0x02) != 0;
      }
      return packet.size = 2;
    }
    case PacketKind::kTsc:
      if (!fits(8)) return -pte_eos;
      packet.tsc = ReadLe(pos + 1, 7);
      return packet.size = 8;
    case PacketKind::kCbr:
      if (!fits(4)) return -pte_eos;
      packet.cbr_ratio = pos[2];
      return packet.size = 4;
    case PacketKind::kTma: {
      if (!fits(7)) return -pte_eos;
      const uint16_t ctc = static_cast<uint16_t>(pos[2] | (pos[3] << 8));
      const uint16_t fc = static_cast<uint16_t>(pos[5] | (pos[6] << 8));
      if ((fc & ~0x1ff) || pos[4]) return -pte_bad_packet;
      packet.tma_ctc = ctc;
      packet.tma_fc = fc;
      return packet.size = 7;
    }
    case PacketKind::kMtc:
      if (!fits(2)) return -pte_eos;
      packet.mtc_ctc = pos[1];
      return packet.size = 2;
    case PacketKind::kCyc: {
      const uint8_t* p = pos;
      uint8_t byte = *p++;
      bool more = (byte & 0x04) != 0;
      uint64_t value = byte >> 3;
      unsigned shift = 5;
      while (more) {
        if (p >= end) return -pte_eos;
        const uint64_t bits = *p++;
        more = (bits & 0x01) != 0;
        if (shift + 7 > 64) return -pte_bad_packet;
        value |= (bits >> 1) << shift;
        shift += 7;
      }
      packet.cyc = value;
      return packet.size = static_cast<uint8_t>(p - pos);
    }
    case PacketKind::kVmcs:
      if (!fits(7)) return -pte_eos;
      packet.vmcs_base = ReadLe(pos + 2, 5) << 12;
      return packet.size = 7;
    case PacketKind::kMnt:
      if (!fits(11)) return -pte_eos;
      packet.mnt = ReadLe(pos + 3, 8);
      return packet.size = 11;
    case PacketKind::kExstop:
      if (!fits(2)) return -pte_eos;
      packet.exstop_ip = (pos[1] & 0x80) != 0;
      return packet.size = 2;
    case PacketKind::kMwait:
      if (!fits(10)) return -pte_eos;
      packet.mwait_hints = static_cast<uint32_t>(ReadLe(pos + 2, 4));
      packet.mwait_ext = static_cast<uint32_t>(ReadLe(pos + 6, 4));
      return packet.size = 10;
    case PacketKind::kPwre: {
      if (!fits(4)) return -pte_eos;
      const uint64_t payload = ReadLe(pos + 2, 2);
      packet.pwre = PowerEntryPayload{};
      packet.pwre.state = static_cast<uint8_t>((payload & 0xf000) >> 12);
      packet.pwre.sub_state = static_cast<uint8_t>((payload & 0xf00) >> 8);
      packet.pwre.hw = (payload & 0x8) != 0;
      return packet.size = 4;
    }
    case PacketKind::kPwrx: {
      if (!fits(7)) return -pte_eos;
      const uint64_t payload = ReadLe(pos + 2, 5);
      packet.pwrx = PowerExitPayload{};
      packet.pwrx.last = static_cast<uint8_t>((payload & 0xf0) >> 4);
      packet.pwrx.deepest = static_cast<uint8_t>(payload & 0xf);
      packet.pwrx.interrupt = (payload & 0x100) != 0;
      packet.pwrx.store = (payload & 0x400) != 0;
      packet.pwrx.autonomous = (payload & 0x800) != 0;
      return packet.size = 7;
    }
    case PacketKind::kPtw: {
      const uint8_t opc = pos[1];
      const uint8_t plc = (opc >> 5) & 0x3;
      const int size = plc == 0 ? 4 : plc == 1 ? 8 : -pte_bad_packet;
      if (size < 0) return size;
      if (!fits(2 + size)) return -pte_eos;
      packet.ptw.payload = ReadLe(pos + 2, size);
      packet.ptw.plc = plc;
      packet.ptw.ip = (opc & 0x80) != 0;
      return packet.size = static_cast<uint8_t>(2 + size);
    }
    case PacketKind::kUnknown: return -pte_bad_opc;
    case PacketKind::kInvalid: return -pte_internal;
  }
  return -pte_internal;
}

int FindPsbForward(const uint8_t* pos, const uint8_t* begin, const uint8_t* end,
                   const uint8_t*& sync) {
  // The PSB payload repeats 02 82; an aligned 8-byte word inside a PSB holds it in one of two
  // phases.
  constexpr uint64_t kPhaseA = 0x8202820282028202ull;  // bytes 02 82 02 82 ...
  constexpr uint64_t kPhaseB = 0x0282028202820282ull;  // bytes 82 02 82 02 ...
  if (pos < begin || end < pos) return -pte_internal;
  const uint8_t* start = pos;
  const auto address = [](const uint8_t* p) { return reinterpret_cast<uintptr_t>(p); };
  pos += (8 - address(pos) % 8) % 8;
  for (;;) {
    const uint8_t* word = pos;
    if (end - pos < 8) return -pte_eos;
    pos += 8;
    uint64_t value;
    std::memcpy(&value, word, 8);
    if (value != kPhaseA && value != kPhaseB) continue;
    // Walk to the end of the repeated pattern, then back to where its PSB must begin.
    const uint8_t* p = pos;
    if (p == end || *p != kOpExt) ++p;  // libipt reads one byte past a final word here
    while (p + 1 < end && p[0] == kOpExt && p[1] == kExtPsb) p += 2;
    const uint8_t* candidate = p - kPsbSize;
    if (candidate < begin) continue;
    if (candidate[0] != kOpExt || candidate[1] != kExtPsb) continue;
    if (ReadPsb(candidate, end) < 0) continue;
    if (candidate < start) continue;
    sync = candidate;
    return 0;
  }
}

}  // namespace ptprof::pt::fast
