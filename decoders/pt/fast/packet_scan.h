#pragma once
// The packet layer of ptprof's own query decoder: which packet starts at a position (from its
// opcode bytes alone) and what it says, with libipt 2.0.5's sizes, bounds checks and error codes
// (-pte_eos for a packet cut by the end of the buffer, -pte_bad_packet for a reserved encoding),
// so that the query decoder above it stops exactly where libipt's would. Reading is done by
// hand on the raw bytes: no libipt call per packet.
#include <intel-pt.h>

#include <array>
#include <cstdint>

#include "decoders/pt/packet.h"

namespace ptprof::pt::fast {

// How the query decoder treats a packet kind (libipt's decoder-function flags).
enum PacketRole : uint8_t {
  kRoleTip = 1 << 0,      // a branch target (TIP)
  kRoleTnt = 1 << 1,      // conditional-branch bits
  kRoleEvent = 1 << 2,    // always produces or completes an event
  kRolePsbEnd = 1 << 3,   // ends a PSB+ header
  kRoleFup = 1 << 4,      // completes events that bind to a FUP
  kRoleUnknown = 1 << 5,
  kRoleTiming = 1 << 6,
  kRolePad = 1 << 7,
};

// The roles of `kind`.
constexpr uint8_t RoleOfKind(PacketKind kind) {
  switch (kind) {
    case PacketKind::kUnknown: return kRoleUnknown;
    case PacketKind::kPad: return kRolePad;
    case PacketKind::kPsb: return 0;
    case PacketKind::kTip: return kRoleTip;
    case PacketKind::kTnt8:
    case PacketKind::kTnt64: return kRoleTnt;
    case PacketKind::kFup: return kRoleFup;
    case PacketKind::kOvf: return kRolePsbEnd | kRoleEvent;
    case PacketKind::kPsbEnd: return kRolePsbEnd;
    case PacketKind::kTsc:
    case PacketKind::kTma:
    case PacketKind::kMtc:
    case PacketKind::kCyc: return kRoleTiming;
    case PacketKind::kCbr: return kRoleTiming | kRoleEvent;
    case PacketKind::kTipPge:
    case PacketKind::kTipPgd:
    case PacketKind::kPip:
    case PacketKind::kMode:
    case PacketKind::kStop:
    case PacketKind::kVmcs:
    case PacketKind::kMnt:
    case PacketKind::kExstop:
    case PacketKind::kMwait:
    case PacketKind::kPwre:
    case PacketKind::kPwrx:
    case PacketKind::kPtw: return kRoleEvent;
    case PacketKind::kInvalid: return 0;
  }
  return 0;
}
// RoleOfKind by table (asked for every packet the query decoder reads).
inline constexpr std::array<uint8_t, 256> kPacketRoles = [] {
  std::array<uint8_t, 256> roles{};
  for (unsigned kind = 0; kind < 256; ++kind) roles[kind] = RoleOfKind(static_cast<PacketKind>(kind));
  return roles;
}();
inline uint8_t RoleOf(PacketKind kind) { return kPacketRoles[static_cast<uint8_t>(kind)]; }
// Whether libipt reads `kind` inside a PSB+ header (it has a header function).
bool ReadInPsbHeader(PacketKind kind);

// The kind of the packet at `pos` in [begin, end): 0 and `kind`, or -pte_nosync when `pos` lies
// outside the buffer, -pte_eos at the end or when the opcode itself is cut.
int FetchKind(const uint8_t* pos, const uint8_t* begin, const uint8_t* end, PacketKind& kind);
// Opcode bytes (Intel SDM Vol. 3C, "Intel Processor Trace", packet definitions).
inline constexpr uint8_t kOpPad = 0x00;
inline constexpr uint8_t kOpExt = 0x02;
inline constexpr uint8_t kOpMode = 0x99;
inline constexpr uint8_t kOpTsc = 0x19;
inline constexpr uint8_t kOpMtc = 0x59;
// The kind of a packet from its first byte, where that byte alone says it (all but the
// extended opcode, which is kInvalid here): the rules FetchKind reads.
inline constexpr std::array<PacketKind, 256> kOneByteKinds = [] {
  std::array<PacketKind, 256> kinds{};
  for (unsigned opc = 0; opc < 256; ++opc) {
    PacketKind kind = PacketKind::kUnknown;
    if (opc == kOpExt) kind = PacketKind::kInvalid;
    else if (opc == kOpPad) kind = PacketKind::kPad;
    else if (opc == kOpMode) kind = PacketKind::kMode;
    else if (opc == kOpTsc) kind = PacketKind::kTsc;
    else if (opc == kOpMtc) kind = PacketKind::kMtc;
    else if ((opc & 0x01) == 0x00) kind = PacketKind::kTnt8;
    else if ((opc & 0x03) == 0x03) kind = PacketKind::kCyc;
    else if ((opc & 0x1f) == 0x0d) kind = PacketKind::kTip;
    else if ((opc & 0x1f) == 0x1d) kind = PacketKind::kFup;
    else if ((opc & 0x1f) == 0x11) kind = PacketKind::kTipPge;
    else if ((opc & 0x1f) == 0x01) kind = PacketKind::kTipPgd;
    kinds[opc] = kind;
  }
  return kinds;
}();
// FetchKind, with the one-byte opcodes (nearly every packet) told here, inline.
inline int FetchKindInline(const uint8_t* pos, const uint8_t* begin, const uint8_t* end,
                           PacketKind& kind) {
  if (pos && begin <= pos && pos < end) {
    const PacketKind known = kOneByteKinds[*pos];
    if (known != PacketKind::kInvalid) {
      kind = known;
      return 0;
    }
  }
  return FetchKind(pos, begin, end, kind);
}

// Reads the packet of `kind` at `pos` into `packet`: its size, or a negative pte error code.
// `kind` must be what FetchKind said. Unknown packets fail with -pte_bad_opc (no decode
// callback is supported).
int ReadPacket(PacketKind kind, const uint8_t* pos, const uint8_t* end, Packet& packet);

// The payload bytes of an IP packet (TIP, TIP.PGE, TIP.PGD, FUP) with IP compression `ipc` (its
// opcode's top three bits), or -pte_bad_packet for a reserved one.
inline int IpPayloadSize(uint8_t ipc) {
  switch (ipc) {
    case 0: return 0;
    case 1: return 2;
    case 2: return 4;
    case 3:
    case 4: return 6;
    case 6: return 8;
    default: return -pte_bad_packet;
  }
}

// Size of a PSB packet; ReadPsb checks its pattern: the size or -pte_eos / -pte_bad_packet.
inline constexpr int kPsbSize = 16;
int ReadPsb(const uint8_t* pos, const uint8_t* end);

// The execution mode of a MODE.Exec payload, in libipt's terms.
pt_exec_mode ExecModeOfPayload(const ModePayload& mode);

// libipt's search for the next PSB at or after `pos` (pt_sync_forward): the PSB's address in
// `sync`, or -pte_eos. Like libipt it looks at 8-byte words aligned in memory.
int FindPsbForward(const uint8_t* pos, const uint8_t* begin, const uint8_t* end,
                   const uint8_t*& sync);

}  // namespace ptprof::pt::fast
