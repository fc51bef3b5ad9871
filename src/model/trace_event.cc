#include "src/model/trace_event.h"

namespace ptprof {

const char* BlockEndName(BlockEnd end) {
  switch (end) {
    case BlockEnd::kUnknown: return "unknown";
    case BlockEnd::kFallThrough: return "fallthrough";
    case BlockEnd::kJump: return "jump";
    case BlockEnd::kCondTaken: return "cond_taken";
    case BlockEnd::kCondNotTaken: return "cond_not_taken";
    case BlockEnd::kCall: return "call";
    case BlockEnd::kReturn: return "return";
    case BlockEnd::kSyscall: return "syscall";
    case BlockEnd::kSysret: return "sysret";
    case BlockEnd::kInterrupt: return "interrupt";
    case BlockEnd::kIret: return "iret";
    case BlockEnd::kFarBranch: return "far_branch";
    case BlockEnd::kTraceStop: return "trace_stop";
  }
  return "unknown";
}

const char* ExecModeName(ExecMode mode) {
  switch (mode) {
    case ExecMode::kUnknown: return "unknown";
    case ExecMode::k16Bit: return "16-bit";
    case ExecMode::k32Bit: return "32-bit";
    case ExecMode::k64Bit: return "64-bit";
    case ExecMode::kA32: return "a32";
    case ExecMode::kT32: return "t32";
    case ExecMode::kA64: return "a64";
  }
  return "unknown";
}

const char* GapReasonName(GapReason reason) {
  switch (reason) {
    case GapReason::kOverflow: return "overflow";
    case GapReason::kDesync: return "desync";
    case GapReason::kNoImage: return "no_image";
    case GapReason::kTruncated: return "truncated";
    case GapReason::kMissingData: return "missing_data";
    case GapReason::kOther: return "other";
    case GapReason::kNoPath: return "no_path";
  }
  return "other";
}

const char* SecurityName(PeContext::Security security) {
  switch (security) {
    case PeContext::Security::kSecure: return "secure";
    case PeContext::Security::kNonSecure: return "nonsecure";
    case PeContext::Security::kRoot: return "root";
    case PeContext::Security::kRealm: return "realm";
  }
  return "nonsecure";
}

namespace {

const char* ToggleName(TraceToggle::Kind kind) {
  switch (kind) {
    case TraceToggle::Kind::kEnabled: return "enabled";
    case TraceToggle::Kind::kDisabled: return "disabled";
    case TraceToggle::Kind::kAsyncDisabled: return "disabled";
    case TraceToggle::Kind::kResumed: return "resumed";
  }
  return "enabled";
}

const char* PowerName(PowerEvent::Kind kind) {
  switch (kind) {
    case PowerEvent::Kind::kCoreBusRatio: return "cbr";
    case PowerEvent::Kind::kPowerEntry: return "pwre";
    case PowerEvent::Kind::kPowerExit: return "pwrx";
    case PowerEvent::Kind::kExecStop: return "exstop";
    case PowerEvent::Kind::kMwait: return "mwait";
  }
  return "power";
}

const char* MarkerName(Marker::Kind kind) {
  switch (kind) {
    case Marker::Kind::kTrigger: return "trigger";
    case Marker::Kind::kSnapshot: return "snapshot";
    case Marker::Kind::kTsxBegin: return "tsx_begin";
    case Marker::Kind::kTsxCommit: return "tsx_commit";
    case Marker::Kind::kTsxAbort: return "tsx_abort";
    case Marker::Kind::kTraceStop: return "stop";
    case Marker::Kind::kPtwrite: return "ptwrite";
    case Marker::Kind::kTick: return "tick";
    case Marker::Kind::kMaintenance: return "mnt";
    case Marker::Kind::kTimestamp: return "timestamp";
    case Marker::Kind::kCycleCount: return "cycle_count";
    case Marker::Kind::kEvent: return "hw_event";
    case Marker::Kind::kSwTrace: return "sw_trace";
    case Marker::Kind::kSyncMarker: return "sync_marker";
    case Marker::Kind::kEndOfTrace: return "end_of_trace";
  }
  return "marker";
}

const char* SwitchName(ContextSwitch::Kind kind) {
  switch (kind) {
    case ContextSwitch::Kind::kPaging: return "paging";
    case ContextSwitch::Kind::kVmcs: return "vmcs";
    case ContextSwitch::Kind::kSideband: return "switch";
  }
  return "switch";
}

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

}  // namespace

const char* EventName(const TraceEvent& event) {
  return std::visit(Overloaded{
                        [](const ExecBlock&) { return "block"; },
                        [](const Instruction&) { return "insn"; },
                        [](const TraceGap&) { return "gap"; },
                        [](const TraceToggle& t) { return ToggleName(t.kind); },
                        [](const ModeChange&) { return "exec_mode"; },
                        [](const ContextSwitch& c) { return SwitchName(c.kind); },
                        [](const PowerEvent& p) { return PowerName(p.kind); },
                        [](const Marker& m) { return MarkerName(m.kind); },
                        [](const Exception& e) {
                          return e.kind == Exception::Kind::kTaken ? "exception"
                                                                   : "exception_return";
                        },
                        [](const PeContext&) { return "pe_context"; },
                    },
                    event.body);
}

}  // namespace ptprof
