#pragma once
// The one data model: every decoder (PT, ETM, LBR) turns its input into an ordered stream of
// TraceEvents per CPU or thread, and every analysis and report consumes that stream. Nothing here
// knows about libipt or OpenCSD.
#include <cstdint>
#include <string>
#include <variant>

namespace ptprof {

inline constexpr uint64_t kUnknownTime = UINT64_MAX;
inline constexpr int32_t kUnknownId = -1;

// How an ExecBlock ended: what its last instruction did.
enum class BlockEnd : uint8_t {
  kUnknown,
  kFallThrough,  // the next block starts right after the last instruction (block split)
  kJump,         // unconditional direct or indirect jump
  kCondTaken,
  kCondNotTaken,
  kCall,
  kReturn,
  kSyscall,
  kSysret,
  kInterrupt,    // software interrupt (int n) or an asynchronous branch ended the block
  kIret,
  kFarBranch,
  kTraceStop,    // tracing was disabled or the trace ended after this block
};

// Instruction-set / execution mode. x86 modes and the Arm instruction sets share one enum so that
// analyses need not care which architecture produced the block.
enum class ExecMode : uint8_t { kUnknown, k16Bit, k32Bit, k64Bit, kA32, kT32, kA64 };

// Common header of every event.
struct EventHeader {
  uint64_t time_ns = kUnknownTime;  // wall-clock or trace-relative nanoseconds, when known
  uint64_t tsc = kUnknownTime;      // raw timestamp counter value, when known
  uint64_t offset = 0;              // byte offset in the trace stream the event was decoded from
  int32_t cpu = kUnknownId;
  int32_t pid = kUnknownId;
  int32_t tid = kUnknownId;
};

// A run of instructions executed back to back.
struct ExecBlock {
  uint64_t first_ip = 0;
  uint64_t last_ip = 0;
  uint32_t insns = 0;
  uint8_t last_insn_size = 0;  // so that the fall-through address is last_ip + last_insn_size
  BlockEnd end = BlockEnd::kUnknown;
  ExecMode mode = ExecMode::kUnknown;
  bool speculative = false;    // executed inside a transaction (TSX) that may abort
  bool truncated = false;      // the last instruction crosses a section boundary
  uint64_t end_time_ns = kUnknownTime;
};

// One instruction, for instruction-flow output. Analyses normally expand ExecBlocks instead.
struct Instruction {
  uint64_t ip = 0;
  uint8_t size = 0;
  uint8_t bytes[15] = {};
  BlockEnd iclass = BlockEnd::kFallThrough;  // what the instruction does to control flow
  ExecMode mode = ExecMode::kUnknown;
  bool speculative = false;
};

// Why part of the trace could not be decoded.
enum class GapReason : uint8_t {
  kOverflow,       // the hardware dropped trace data
  kDesync,         // the decoder lost synchronisation (bad packet, unexpected packet)
  kNoImage,        // no code is known at the address
  kTruncated,      // the trace ends in the middle of a packet
  kMissingData,    // AUX data or a snapshot part is missing
  kOther,
  kNoPath,         // instructions were executed but their path is unknown (Arm: range without path)
};

// Data that could not be decoded. Decoding resumes at the next synchronisation point.
struct TraceGap {
  GapReason reason = GapReason::kOther;
  uint64_t ip = 0;
  bool has_ip = false;
  std::string detail;  // the decoder's own words, e.g. libipt's error string
  int code = 0;        // the decoder's own error code (e.g. -pte_nomap), 0 when not applicable
};

// Tracing was enabled or disabled (filters, privilege, explicit start/stop).
struct TraceToggle {
  enum class Kind : uint8_t { kEnabled, kDisabled, kAsyncDisabled, kResumed };
  Kind kind = Kind::kEnabled;
  uint64_t ip = 0;
  bool has_ip = false;
};

struct ModeChange {
  ExecMode mode = ExecMode::kUnknown;
  uint64_t ip = 0;
  bool has_ip = false;
};

// The address space changed: a context switch seen in the trace (PIP/CR3, VMCS) or in sideband.
struct ContextSwitch {
  enum class Kind : uint8_t { kPaging, kVmcs, kSideband };
  Kind kind = Kind::kSideband;
  uint64_t value = 0;  // CR3 or VMCS base for trace-level switches
  bool non_root = false;
  int32_t next_pid = kUnknownId;
  int32_t next_tid = kUnknownId;
  uint64_t ip = 0;
  bool has_ip = false;
};

// Power and frequency events: core:bus ratio, C-state entry/exit, execution stop, MWAIT.
struct PowerEvent {
  enum class Kind : uint8_t { kCoreBusRatio, kPowerEntry, kPowerExit, kExecStop, kMwait };
  Kind kind = Kind::kCoreBusRatio;
  uint64_t value = 0;  // ratio, or state/sub-state packed as (state << 4 | sub_state)
  uint32_t hints = 0;
  uint32_t ext = 0;
  uint64_t ip = 0;
  bool has_ip = false;
};

// Other decoder-level facts: transactions, PTWRITE payloads, timing ticks, maintenance.
struct Marker {
  enum class Kind : uint8_t {
    kTrigger,        // a ptprof trigger fired here (label says which)
    kSnapshot,       // a snapshot boundary
    kTsxBegin,
    kTsxCommit,
    kTsxAbort,
    kTraceStop,      // TraceStop packet: tracing stopped by the hardware
    kPtwrite,
    kTick,           // a timing packet arrived at this IP (ptxed's --event:tick)
    kMaintenance,
    kTimestamp,      // Arm: a timestamp packet; value is the timestamp
    kCycleCount,     // Arm: cycles since the last cycle count; value is the count
    kEvent,          // Arm: a trigger or numbered event; value is the event number
    kSwTrace,        // Arm STM/ITM: software trace; value is the payload, label master/channel
    kSyncMarker,     // Arm ETE: a timestamp marker; value is the marker value
    kEndOfTrace,     // the trace buffer ends here
  };
  Kind kind = Kind::kTrigger;
  uint64_t value = 0;
  uint64_t ip = 0;
  bool has_ip = false;
  std::string label;
};

// An exception was taken (number, preferred return address) or returned from (Arm ETM/ETE).
struct Exception {
  enum class Kind : uint8_t { kTaken, kReturn };
  Kind kind = Kind::kTaken;
  uint32_t number = 0;  // architecture- and protocol-specific exception number (taken only)
  uint64_t return_ip = 0;
  bool has_return_ip = false;
};

// The processing element's context changed or was restated (Arm): instruction set, exception
// level, security state, context ID and VMID when the trace carries them.
struct PeContext {
  enum class Security : uint8_t { kSecure, kNonSecure, kRoot, kRealm };
  ExecMode mode = ExecMode::kUnknown;
  int8_t exception_level = -1;  // -1 when the protocol does not trace it
  Security security = Security::kNonSecure;
  bool is_64bit = false;
  uint32_t context_id = 0;
  bool has_context_id = false;
  uint32_t vmid = 0;
  bool has_vmid = false;
};

using EventBody = std::variant<ExecBlock, Instruction, TraceGap, TraceToggle, ModeChange,
                               ContextSwitch, PowerEvent, Marker, Exception, PeContext>;

struct TraceEvent {
  EventHeader header;
  EventBody body;
};

const char* BlockEndName(BlockEnd end);
const char* ExecModeName(ExecMode mode);
const char* GapReasonName(GapReason reason);
const char* SecurityName(PeContext::Security security);

// The name of an event's kind as JSONL spells it in its "event" field ("enabled", "exec_mode",
// "gap", "cbr", "tsx_abort", ...); "block" and "insn" for ExecBlock and Instruction.
const char* EventName(const TraceEvent& event);

}  // namespace ptprof
