#pragma once
// The packet layer of ptprof's own query decoder: which packet starts at a position (from its
// opcode bytes alone) and what it says, with libipt 2.0.5's sizes, bounds checks and error codes
// (-pte_eos for a packet cut by the end of the buffer, -pte_bad_packet for a reserved encoding),
// so that the query decoder above it stops exactly where libipt's would. Reading is done by
// hand on the raw bytes: no libipt call per packet.
#include <intel-pt.h>

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
uint8_t RoleOf(PacketKind kind);
// Whether libipt reads `kind` inside a PSB+ header (it has a header function).
bool ReadInPsbHeader(PacketKind kind);

// The kind of the packet at `pos` in [begin, end): 0 and `kind`, or -pte_nosync when `pos` lies
// outside the buffer, -pte_eos at the end or when the opcode itself is cut.
int FetchKind(const uint8_t* pos, const uint8_t* begin, const uint8_t* end, PacketKind& kind);

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
