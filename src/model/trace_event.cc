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
  }
  return "other";
}

}  // namespace ptprof
