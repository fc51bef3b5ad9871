#pragma once
// InsnText answers "what does this instruction look like to a pattern?": its mnemonic, its operands
// one by one (normalised: lower case, no blanks, numbers as numbers), its encoding and whether it
// runs in the kernel half of the address space. x86 and Arm instructions take the same shape so
// that one pattern matcher serves both.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/model/trace_event.h"

namespace ptprof::patterns {

// What kind of thing an operand is, as far as patterns can ask (r64, imm, mem, xmm, ...).
enum class OperandKind : uint8_t { kOther, kReg8, kReg16, kReg32, kReg64, kXmm, kYmm, kZmm, kX87,
                                   kOtherReg, kImm, kMem };

struct Operand {
  std::string text;               // normalised: lower case, without blanks
  OperandKind kind = OperandKind::kOther;
  std::optional<uint64_t> value;  // an immediate's value ("#2", "0x2", "2" are all 2)
};

struct InsnText {
  std::string mnemonic;  // lower case, without prefixes ("rep", "lock", ...)
  std::vector<Operand> operands;
  uint8_t length = 0;
  uint8_t bytes[16] = {};
  bool kernel = false;   // the address is in the kernel half (see IsKernelAddress)
};

// Whether `ip` is a kernel address for `mode`: the upper half for 64-bit modes, 0xc0000000 and
// above (Linux's default 3G/1G split) for 32-bit ones.
bool IsKernelAddress(uint64_t ip, ExecMode mode);

// Splits disassembler text ("mov qword ptr [rsp+0x8], rax", "msr daifset, #2") into an InsnText
// (without bytes and length). Prefix words are dropped; commas inside [] or {} do not split.
InsnText ParseInsnText(std::string_view text);

// Normalises one operand's text and classifies it (the same rules apply to a pattern's literal
// operands, so that "#0x2" in a pattern equals "#2" from capstone).
Operand NormaliseOperand(std::string_view text);

// The number in `text` ("#2", "0x10", "-1"), if the whole operand is one.
std::optional<uint64_t> ParseNumber(std::string_view text);

}  // namespace ptprof::patterns
