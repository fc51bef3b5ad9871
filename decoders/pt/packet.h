#pragma once
// Packet answers "what does one Intel PT packet say?" in ptprof's own terms, so that the listing
// formats, the timing tracker and the tests never need libipt's types. The packet reader
// (packet_reader.h) fills it from libipt's packet decoder; tests may also build one by hand.
#include <cstdint>
#include <string>

#include "src/model/trace_event.h"

namespace ptprof::pt {

enum class PacketKind : uint8_t {
  kInvalid,
  kUnknown,
  kPad,
  kPsb,
  kPsbEnd,
  kFup,
  kTip,
  kTipPge,
  kTipPgd,
  kTnt8,
  kTnt64,
  kMode,  // see ModePayload::leaf
  kPip,
  kVmcs,
  kCbr,
  kTsc,
  kTma,
  kMtc,
  kCyc,
  kStop,
  kOvf,
  kMnt,
  kExstop,
  kMwait,
  kPwre,
  kPwrx,
  kPtw,
};

// How many of the last IP's bytes an IP packet replaces (the values are the IPBytes field).
enum class IpCompression : uint8_t {
  kSuppressed = 0,
  kUpdate16 = 1,
  kUpdate32 = 2,
  kSignExtend48 = 3,
  kUpdate48 = 4,
  kFull = 6,
};

// The MODE packet's leaf selector (bits 7:5 of its payload byte).
inline constexpr uint8_t kModeLeafExec = 0x00;
inline constexpr uint8_t kModeLeafTsx = 0x20;

struct IpPayload {
  IpCompression ipc = IpCompression::kSuppressed;
  uint64_t ip = 0;  // the bytes the packet carries, not sign-extended
};

struct TntPayload {
  uint8_t bit_count = 0;
  uint64_t bits = 0;  // the oldest branch is the most significant of `bit_count` bits
};

struct ModePayload {
  uint8_t leaf = kModeLeafExec;
  bool csl = false;   // exec: CS.L
  bool csd = false;   // exec: CS.D
  bool intx = false;  // tsx: in transaction
  bool abrt = false;  // tsx: aborted
};

struct PowerEntryPayload {
  uint8_t state = 0;
  uint8_t sub_state = 0;
  bool hw = false;
};

struct PowerExitPayload {
  uint8_t last = 0;
  uint8_t deepest = 0;
  bool interrupt = false;
  bool store = false;
  bool autonomous = false;
};

struct PtwPayload {
  uint8_t plc = 0;  // payload size: 0 = 4 bytes, 1 = 8 bytes
  uint64_t payload = 0;
  bool ip = false;
};

struct Packet {
  PacketKind kind = PacketKind::kInvalid;
  uint8_t size = 0;  // bytes in the trace
  IpPayload ip;      // FUP, TIP, TIP.PGE, TIP.PGD
  TntPayload tnt;    // TNT-8, TNT-64
  ModePayload mode;
  uint64_t cr3 = 0;  // PIP
  bool pip_nr = false;
  uint64_t vmcs_base = 0;
  uint8_t cbr_ratio = 0;
  uint64_t tsc = 0;
  uint16_t tma_ctc = 0;
  uint16_t tma_fc = 0;
  uint8_t mtc_ctc = 0;
  uint64_t cyc = 0;
  uint64_t mnt = 0;
  bool exstop_ip = false;
  uint32_t mwait_hints = 0;
  uint32_t mwait_ext = 0;
  PowerEntryPayload pwre;
  PowerExitPayload pwrx;
  PtwPayload ptw;
};

// True for FUP, TIP, TIP.PGE and TIP.PGD: the packets that carry an IP payload.
bool HasIpPayload(PacketKind kind);

// The execution mode a MODE.Exec packet announces (CS.L and CS.D both set is reserved: unknown).
// The model's ExecModeName spells the x86 modes the way ptdump does ("64-bit", ..., "unknown").
ExecMode ExecModeOf(const ModePayload& mode);

// The packet's name as ptdump spells it ("tip.pge", "mode.exec", "tnt.8", ...).
std::string PacketName(const Packet& packet);

// The payload as ptdump prints it ("3: ffffffffffff1000", "!..!", "afafa0, nr", ...); empty when
// the packet has none. Never truncated (ptdump's column limits are the ptdump writer's business).
std::string PacketPayloadText(const Packet& packet);

// Sign-extends the low `bits` bits of `value`.
uint64_t SignExtend(uint64_t value, unsigned bits);

}  // namespace ptprof::pt
