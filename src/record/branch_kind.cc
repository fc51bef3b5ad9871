#include "src/record/branch_kind.h"

namespace ptprof::record {

pt::BranchKind UserModeBranchKind(const X86Insn& insn) {
  using pt::BranchKind;
  switch (insn.kind) {
    case X86Kind::kOther: return BranchKind::kNone;
    case X86Kind::kCondJump: return BranchKind::kCondJump;
    case X86Kind::kCallNear:
      return insn.has_branch_disp ? BranchKind::kDirectCall : BranchKind::kIndirectCall;
    case X86Kind::kJumpNear:
      return insn.has_branch_disp ? BranchKind::kDirectJump : BranchKind::kIndirectJump;
    case X86Kind::kRetNear: return BranchKind::kReturn;
    // Everything that enters the kernel (or a hypervisor) pauses user-only tracing.
    case X86Kind::kSyscall:
    case X86Kind::kInterrupt:
    case X86Kind::kVmCall:
      return BranchKind::kSyscall;
    case X86Kind::kCallFar:
    case X86Kind::kJumpFar:
    case X86Kind::kRetFar:
    case X86Kind::kSysret:
    case X86Kind::kIret:
    case X86Kind::kVmEntry:
      return BranchKind::kFarTransfer;
  }
  return BranchKind::kNone;
}

}  // namespace ptprof::record
