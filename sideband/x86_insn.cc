#include "sideband/x86_insn.h"

#include <Zydis/Zydis.h>

namespace ptprof {

struct X86Decoder::Impl {
  ZydisDecoder dec16;
  ZydisDecoder dec32;
  ZydisDecoder dec64;
  ZydisFormatter intel;
  ZydisFormatter att;

  const ZydisDecoder* For(ExecMode mode) const {
    switch (mode) {
      case ExecMode::k16Bit: return &dec16;
      case ExecMode::k32Bit: return &dec32;
      case ExecMode::k64Bit: return &dec64;
      default: return nullptr;
    }
  }
};

namespace {

bool IsFar(const ZydisDecodedInstruction& insn) {
  return insn.meta.branch_type == ZYDIS_BRANCH_TYPE_FAR;
}

X86Kind Classify(const ZydisDecodedInstruction& insn) {
  switch (insn.mnemonic) {
    case ZYDIS_MNEMONIC_CALL: return IsFar(insn) ? X86Kind::kCallFar : X86Kind::kCallNear;
    case ZYDIS_MNEMONIC_RET: return IsFar(insn) ? X86Kind::kRetFar : X86Kind::kRetNear;
    case ZYDIS_MNEMONIC_JMP: return IsFar(insn) ? X86Kind::kJumpFar : X86Kind::kJumpNear;
    case ZYDIS_MNEMONIC_JCXZ:
    case ZYDIS_MNEMONIC_JECXZ:
    case ZYDIS_MNEMONIC_JRCXZ:
    case ZYDIS_MNEMONIC_LOOP:
    case ZYDIS_MNEMONIC_LOOPE:
    case ZYDIS_MNEMONIC_LOOPNE: return X86Kind::kCondJump;
    case ZYDIS_MNEMONIC_SYSCALL:
    case ZYDIS_MNEMONIC_SYSENTER: return X86Kind::kSyscall;
    case ZYDIS_MNEMONIC_SYSRET:
    case ZYDIS_MNEMONIC_SYSEXIT: return X86Kind::kSysret;
    case ZYDIS_MNEMONIC_INT:
    case ZYDIS_MNEMONIC_INT1:
    case ZYDIS_MNEMONIC_INT3:
    case ZYDIS_MNEMONIC_INTO: return X86Kind::kInterrupt;
    case ZYDIS_MNEMONIC_IRET:
    case ZYDIS_MNEMONIC_IRETD:
    case ZYDIS_MNEMONIC_IRETQ: return X86Kind::kIret;
    case ZYDIS_MNEMONIC_VMCALL:
    case ZYDIS_MNEMONIC_VMMCALL: return X86Kind::kVmCall;
    case ZYDIS_MNEMONIC_VMLAUNCH:
    case ZYDIS_MNEMONIC_VMRESUME: return X86Kind::kVmEntry;
    // Transactions are conditional branches to Zydis (xbegin has a fallback target) but they do
    // not change the flow a trace describes.
    case ZYDIS_MNEMONIC_XBEGIN:
    case ZYDIS_MNEMONIC_XEND: return X86Kind::kOther;
    default: break;
  }
  if (insn.meta.category == ZYDIS_CATEGORY_COND_BR) return X86Kind::kCondJump;
  return X86Kind::kOther;
}

void ConfigureLikeXed(ZydisFormatter& f) {
  // XED's look: "mov rsi, 0x402000", "mov eax, dword ptr [rbp-0x4]", "jmp 0x401020".
  ZydisFormatterSetProperty(&f, ZYDIS_FORMATTER_PROP_HEX_UPPERCASE, ZYAN_FALSE);
  ZydisFormatterSetProperty(&f, ZYDIS_FORMATTER_PROP_FORCE_SIZE, ZYAN_TRUE);
  ZydisFormatterSetProperty(&f, ZYDIS_FORMATTER_PROP_FORCE_RELATIVE_RIPREL, ZYAN_TRUE);
  ZydisFormatterSetProperty(&f, ZYDIS_FORMATTER_PROP_ADDR_PADDING_ABSOLUTE, ZYDIS_PADDING_DISABLED);
  ZydisFormatterSetProperty(&f, ZYDIS_FORMATTER_PROP_ADDR_PADDING_RELATIVE, ZYDIS_PADDING_DISABLED);
  ZydisFormatterSetProperty(&f, ZYDIS_FORMATTER_PROP_DISP_PADDING, ZYDIS_PADDING_DISABLED);
  ZydisFormatterSetProperty(&f, ZYDIS_FORMATTER_PROP_IMM_PADDING, ZYDIS_PADDING_DISABLED);
  ZydisFormatterSetProperty(&f, ZYDIS_FORMATTER_PROP_IMM_SIGNEDNESS, ZYDIS_SIGNEDNESS_UNSIGNED);
}

}  // namespace

BlockEnd X86KindToBlockEnd(X86Kind kind) {
  switch (kind) {
    case X86Kind::kOther: return BlockEnd::kFallThrough;
    case X86Kind::kCallNear: return BlockEnd::kCall;
    case X86Kind::kRetNear: return BlockEnd::kReturn;
    case X86Kind::kJumpNear: return BlockEnd::kJump;
    case X86Kind::kCondJump: return BlockEnd::kCondTaken;
    case X86Kind::kSyscall:
    case X86Kind::kVmCall: return BlockEnd::kSyscall;
    case X86Kind::kSysret: return BlockEnd::kSysret;
    case X86Kind::kInterrupt: return BlockEnd::kInterrupt;
    case X86Kind::kIret: return BlockEnd::kIret;
    case X86Kind::kCallFar:
    case X86Kind::kRetFar:
    case X86Kind::kJumpFar:
    case X86Kind::kVmEntry: return BlockEnd::kFarBranch;
  }
  return BlockEnd::kUnknown;
}

const char* X86KindName(X86Kind kind) {
  switch (kind) {
    case X86Kind::kOther: return "other";
    case X86Kind::kCallNear: return "near call";
    case X86Kind::kCallFar: return "far call";
    case X86Kind::kRetNear: return "near return";
    case X86Kind::kRetFar: return "far return";
    case X86Kind::kJumpNear: return "near jump";
    case X86Kind::kJumpFar: return "far jump";
    case X86Kind::kCondJump: return "cond jump";
    case X86Kind::kSyscall: return "syscall";
    case X86Kind::kSysret: return "sysret";
    case X86Kind::kInterrupt: return "interrupt";
    case X86Kind::kIret: return "iret";
    case X86Kind::kVmCall: return "vmcall";
    case X86Kind::kVmEntry: return "vm entry";
  }
  return "other";
}

X86Decoder::X86Decoder() : impl_(std::make_unique<Impl>()) {
  ZydisDecoderInit(&impl_->dec16, ZYDIS_MACHINE_MODE_LEGACY_16, ZYDIS_STACK_WIDTH_16);
  ZydisDecoderInit(&impl_->dec32, ZYDIS_MACHINE_MODE_LEGACY_32, ZYDIS_STACK_WIDTH_32);
  ZydisDecoderInit(&impl_->dec64, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
  ZydisFormatterInit(&impl_->intel, ZYDIS_FORMATTER_STYLE_INTEL);
  ZydisFormatterInit(&impl_->att, ZYDIS_FORMATTER_STYLE_ATT);
  for (ZydisFormatter* formatter : {&impl_->intel, &impl_->att}) ConfigureLikeXed(*formatter);
}


X86Decoder::~X86Decoder() = default;

Result<X86Insn> X86Decoder::Decode(const uint8_t* bytes, size_t size, ExecMode mode) const {
  const ZydisDecoder* dec = impl_->For(mode);
  if (!dec) return Fail(std::string("cannot decode x86 in mode ") + ExecModeName(mode));
  // Length, class and branch displacement need no operand decoding, which is most of the cost.
  ZydisDecodedInstruction insn;
  ZyanStatus status = ZydisDecoderDecodeInstruction(dec, nullptr, bytes, size, &insn);
  if (!ZYAN_SUCCESS(status)) return Fail("undecodable instruction");
  X86Insn out;
  out.length = insn.length;
  out.kind = Classify(insn);
  const char* name = ZydisMnemonicGetString(insn.mnemonic);
  out.mnemonic = name ? name : "";
  for (int i = 0; i < 2; ++i) {
    if (insn.raw.imm[i].is_relative) {
      out.has_branch_disp = true;
      out.branch_disp = insn.raw.imm[i].value.s;
      break;
    }
  }
  return out;
}

Result<std::string> X86Decoder::Format(const uint8_t* bytes, size_t size, ExecMode mode,
                                       uint64_t ip, bool att) const {
  const ZydisDecoder* dec = impl_->For(mode);
  if (!dec) return Fail(std::string("cannot decode x86 in mode ") + ExecModeName(mode));
  ZydisDecodedInstruction insn;
  ZydisDecodedOperand operands[ZYDIS_MAX_OPERAND_COUNT];
  if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(dec, bytes, size, &insn, operands)))
    return Fail("undecodable instruction");
  char buf[256];
  if (!ZYAN_SUCCESS(ZydisFormatterFormatInstruction(att ? &impl_->att : &impl_->intel, &insn, operands,
                                                    insn.operand_count_visible, buf, sizeof buf,
                                                    ip, nullptr)))
    return Fail("cannot format instruction");
  std::string text(buf);
  if (insn.operand_count_visible == 0) text += ' ';
  // XED writes an address computation without a size: "lea rsi, ptr [rip+0x2d5e]".
  if (!att && insn.mnemonic == ZYDIS_MNEMONIC_LEA) {
    size_t bracket = text.find(", [");
    if (bracket != std::string::npos) text.insert(bracket + 2, "ptr ");
  }
  return text;
}

}  // namespace ptprof
