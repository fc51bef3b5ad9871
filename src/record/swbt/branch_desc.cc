#include "src/record/swbt/branch_desc.h"

namespace ptprof::swbt {

namespace {

constexpr uint64_t kCF = 1u << 0, kPF = 1u << 2, kZF = 1u << 6, kSF = 1u << 7, kOF = 1u << 11;

Condition ConditionOf(ZydisMnemonic mnemonic) {
  switch (mnemonic) {
    case ZYDIS_MNEMONIC_JO: return Condition::kO;
    case ZYDIS_MNEMONIC_JNO: return Condition::kNO;
    case ZYDIS_MNEMONIC_JB: return Condition::kB;
    case ZYDIS_MNEMONIC_JNB: return Condition::kNB;
    case ZYDIS_MNEMONIC_JZ: return Condition::kZ;
    case ZYDIS_MNEMONIC_JNZ: return Condition::kNZ;
    case ZYDIS_MNEMONIC_JBE: return Condition::kBE;
    case ZYDIS_MNEMONIC_JNBE: return Condition::kNBE;
    case ZYDIS_MNEMONIC_JS: return Condition::kS;
    case ZYDIS_MNEMONIC_JNS: return Condition::kNS;
    case ZYDIS_MNEMONIC_JP: return Condition::kP;
    case ZYDIS_MNEMONIC_JNP: return Condition::kNP;
    case ZYDIS_MNEMONIC_JL: return Condition::kL;
    case ZYDIS_MNEMONIC_JNL: return Condition::kNL;
    case ZYDIS_MNEMONIC_JLE: return Condition::kLE;
    case ZYDIS_MNEMONIC_JNLE: return Condition::kNLE;
    case ZYDIS_MNEMONIC_JCXZ: return Condition::kCxz;
    case ZYDIS_MNEMONIC_JECXZ: return Condition::kEcxz;
    case ZYDIS_MNEMONIC_JRCXZ: return Condition::kRcxz;
    case ZYDIS_MNEMONIC_LOOP: return Condition::kLoop;
    case ZYDIS_MNEMONIC_LOOPE: return Condition::kLoopE;
    case ZYDIS_MNEMONIC_LOOPNE: return Condition::kLoopNE;
    default: return Condition::kNone;
  }
}

bool ConditionHolds(const BranchDesc& b, const RegisterFile& regs) {
  const uint64_t f = regs.rflags;
  const bool cf = f & kCF, pf = f & kPF, zf = f & kZF, sf = f & kSF, of = f & kOF;
  const uint64_t rcx = regs.gpr[1];
  const uint64_t count = b.count_32bit ? (rcx & 0xffffffffu) : rcx;
  const uint64_t after = b.count_32bit ? ((count - 1) & 0xffffffffu) : count - 1;  // loop decrements first
  switch (b.condition) {
    case Condition::kO: return of;
    case Condition::kNO: return !of;
    case Condition::kB: return cf;
    case Condition::kNB: return !cf;
    case Condition::kZ: return zf;
    case Condition::kNZ: return !zf;
    case Condition::kBE: return cf || zf;
    case Condition::kNBE: return !cf && !zf;
    case Condition::kS: return sf;
    case Condition::kNS: return !sf;
    case Condition::kP: return pf;
    case Condition::kNP: return !pf;
    case Condition::kL: return sf != of;
    case Condition::kNL: return sf == of;
    case Condition::kLE: return zf || sf != of;
    case Condition::kNLE: return !zf && sf == of;
    case Condition::kCxz: return (rcx & 0xffff) == 0;
    case Condition::kEcxz: return (rcx & 0xffffffffu) == 0;
    case Condition::kRcxz: return rcx == 0;
    case Condition::kLoop: return after != 0;
    case Condition::kLoopE: return after != 0 && zf;
    case Condition::kLoopNE: return after != 0 && !zf;
    case Condition::kNone: break;
  }
  return false;
}

// Fills the indirect target of `b` from operand 0; false when the tracer cannot evaluate it.
bool DescribeIndirectTarget(const ZydisDecodedInstruction& insn, const ZydisDecodedOperand& op,
                            BranchDesc& b) {
  if (op.type == ZYDIS_OPERAND_TYPE_REGISTER) {
    b.base = static_cast<int8_t>(RegisterIndex(op.reg.value));
    return b.base != kNoReg && b.base != kRip;
  }
  if (op.type != ZYDIS_OPERAND_TYPE_MEMORY || op.size != 64 || insn.address_width != 64)
    return false;
  if (op.mem.segment != ZYDIS_REGISTER_DS && op.mem.segment != ZYDIS_REGISTER_SS &&
      op.mem.segment != ZYDIS_REGISTER_NONE)
    return false;  // fs:/gs: relative: the segment base is not in the signal context
  b.mem = true;
  if (op.mem.base != ZYDIS_REGISTER_NONE) {
    b.base = static_cast<int8_t>(RegisterIndex(op.mem.base));
    if (b.base == kNoReg) return false;
  }
  if (op.mem.index != ZYDIS_REGISTER_NONE) {
    b.index = static_cast<int8_t>(RegisterIndex(op.mem.index));
    if (b.index == kNoReg || b.index == kRip) return false;
  }
  b.scale = op.mem.scale;
  b.disp = op.mem.disp.has_displacement ? op.mem.disp.value : 0;
  return true;
}

}  // namespace

int RegisterIndex(ZydisRegister reg) {
  switch (reg) {
    case ZYDIS_REGISTER_RAX: return 0;
    case ZYDIS_REGISTER_RCX: return 1;
    case ZYDIS_REGISTER_RDX: return 2;
    case ZYDIS_REGISTER_RBX: return 3;
    case ZYDIS_REGISTER_RSP: return 4;
    case ZYDIS_REGISTER_RBP: return 5;
    case ZYDIS_REGISTER_RSI: return 6;
    case ZYDIS_REGISTER_RDI: return 7;
    case ZYDIS_REGISTER_R8: return 8;
    case ZYDIS_REGISTER_R9: return 9;
    case ZYDIS_REGISTER_R10: return 10;
    case ZYDIS_REGISTER_R11: return 11;
    case ZYDIS_REGISTER_R12: return 12;
    case ZYDIS_REGISTER_R13: return 13;
    case ZYDIS_REGISTER_R14: return 14;
    case ZYDIS_REGISTER_R15: return 15;
    case ZYDIS_REGISTER_RIP: return kRip;
    default: return kNoReg;
  }
}

BranchDesc DescribeInstruction(const ZydisDecodedInstruction& insn,
                               const ZydisDecodedOperand* operands, uint64_t address) {
  BranchDesc b;
  b.address = address;
  b.length = insn.length;
  switch (insn.mnemonic) {
    case ZYDIS_MNEMONIC_IRET: case ZYDIS_MNEMONIC_IRETD: case ZYDIS_MNEMONIC_IRETQ:
    case ZYDIS_MNEMONIC_SYSRET: case ZYDIS_MNEMONIC_SYSEXIT: case ZYDIS_MNEMONIC_UD0:
    case ZYDIS_MNEMONIC_UD1: case ZYDIS_MNEMONIC_UD2: case ZYDIS_MNEMONIC_HLT:
    case ZYDIS_MNEMONIC_XBEGIN: case ZYDIS_MNEMONIC_XABORT:
      b.kind = BranchKind::kUnsupported;
      return b;
    default: break;
  }
  const bool far = insn.meta.branch_type == ZYDIS_BRANCH_TYPE_FAR;
  switch (insn.meta.category) {
    case ZYDIS_CATEGORY_SYSCALL:
    case ZYDIS_CATEGORY_INTERRUPT:
      b.kind = BranchKind::kSyscall;
      return b;
    case ZYDIS_CATEGORY_SYSRET:
      b.kind = BranchKind::kUnsupported;
      return b;
    case ZYDIS_CATEGORY_RET:
      b.kind = far ? BranchKind::kUnsupported : BranchKind::kReturn;
      if (insn.operand_count_visible > 0 && operands[0].type == ZYDIS_OPERAND_TYPE_IMMEDIATE)
        b.disp = static_cast<int64_t>(operands[0].imm.value.u);  // ret imm16: bytes popped
      return b;
    case ZYDIS_CATEGORY_COND_BR: {
      b.condition = ConditionOf(insn.mnemonic);
      const ZydisDecodedOperand& op = operands[0];
      if (b.condition == Condition::kNone || op.type != ZYDIS_OPERAND_TYPE_IMMEDIATE ||
          !op.imm.is_relative) {
        b.kind = BranchKind::kUnsupported;
        return b;
      }
      b.kind = BranchKind::kCondJump;
      b.count_32bit = insn.address_width == 32;
      b.target = address + insn.length + static_cast<uint64_t>(op.imm.value.s);
      return b;
    }
    case ZYDIS_CATEGORY_UNCOND_BR:
    case ZYDIS_CATEGORY_CALL: {
      const bool call = insn.meta.category == ZYDIS_CATEGORY_CALL;
      const ZydisDecodedOperand& op = operands[0];
      if (far) {
        b.kind = BranchKind::kUnsupported;
      } else if (op.type == ZYDIS_OPERAND_TYPE_IMMEDIATE && op.imm.is_relative) {
        b.kind = call ? BranchKind::kDirectCall : BranchKind::kDirectJump;
        b.target = address + insn.length + static_cast<uint64_t>(op.imm.value.s);
      } else if (DescribeIndirectTarget(insn, op, b)) {
        b.kind = call ? BranchKind::kIndirectCall : BranchKind::kIndirectJump;
      } else {
        b = BranchDesc{address, insn.length, BranchKind::kUnsupported};
      }
      return b;
    }
    default:
      return b;
  }
}

StackEffect StackEffectOf(const ZydisDecodedInstruction& insn, const ZydisDecodedOperand* operands) {
  const int64_t width = insn.operand_width / 8;
  switch (insn.mnemonic) {
    case ZYDIS_MNEMONIC_PUSH: case ZYDIS_MNEMONIC_PUSHF: case ZYDIS_MNEMONIC_PUSHFQ:
      return {true, -width};
    case ZYDIS_MNEMONIC_POP: case ZYDIS_MNEMONIC_POPF: case ZYDIS_MNEMONIC_POPFQ:
      if (operands[0].type == ZYDIS_OPERAND_TYPE_REGISTER &&
          operands[0].reg.value == ZYDIS_REGISTER_RSP)
        return {false, 0};
      return {true, width};
    case ZYDIS_MNEMONIC_ADD: case ZYDIS_MNEMONIC_SUB:
      if (insn.operand_count_visible == 2 && operands[0].type == ZYDIS_OPERAND_TYPE_REGISTER &&
          operands[0].reg.value == ZYDIS_REGISTER_RSP &&
          operands[1].type == ZYDIS_OPERAND_TYPE_IMMEDIATE) {
        const int64_t imm = operands[1].imm.value.s;
        return {true, insn.mnemonic == ZYDIS_MNEMONIC_ADD ? imm : -imm};
      }
      break;
    default: break;
  }
  for (uint8_t i = 0; i < insn.operand_count; ++i) {
    const ZydisDecodedOperand& op = operands[i];
    if (op.type != ZYDIS_OPERAND_TYPE_REGISTER || !(op.actions & ZYDIS_OPERAND_ACTION_MASK_WRITE))
      continue;
    const ZydisRegister r = op.reg.value;
    if (r == ZYDIS_REGISTER_RSP || r == ZYDIS_REGISTER_ESP || r == ZYDIS_REGISTER_SP ||
        r == ZYDIS_REGISTER_SPL)
      return {false, 0};
  }
  return {true, 0};
}

BranchOutcome EvaluateBranch(const BranchDesc& b, const RegisterFile& regs, ReadMemoryFn read,
                             void* read_context) {
  BranchOutcome out;
  switch (b.kind) {
    case BranchKind::kDirectJump:
    case BranchKind::kDirectCall:
      return {true, true, b.target};
    case BranchKind::kCondJump: {
      const bool taken = ConditionHolds(b, regs);
      return {true, taken, taken ? b.target : b.NextIp()};
    }
    case BranchKind::kIndirectJump:
    case BranchKind::kIndirectCall: {
      auto value = [&](int reg) -> uint64_t {
        if (reg == kNoReg) return 0;
        return reg == kRip ? b.NextIp() : regs.gpr[reg];  // rip-relative: from the next insn
      };
      if (!b.mem) return {true, true, regs.gpr[b.base]};
      const uint64_t at = value(b.base) + value(b.index) * b.scale + static_cast<uint64_t>(b.disp);
      uint64_t target = 0;
      if (read(read_context, at, &target, sizeof target) != sizeof target) return out;
      return {true, true, target};
    }
    case BranchKind::kReturn: {
      uint64_t target = 0;
      if (read(read_context, regs.gpr[kRsp], &target, sizeof target) != sizeof target) return out;
      return {true, true, target};
    }
    default:
      return out;
  }
}

}  // namespace ptprof::swbt
