#include "src/analyses/patterns/insn_text.h"

#include <array>
#include <cctype>
#include <cstdlib>

namespace ptprof::patterns {

namespace {

// x86 prefixes the formatter prints as words of their own before the mnemonic.
constexpr std::array<std::string_view, 11> kPrefixWords = {
    "rep", "repe", "repz", "repne", "repnz", "lock", "bnd", "notrack", "data16", "xacquire",
    "xrelease"};

bool IsPrefixWord(std::string_view word) {
  for (std::string_view p : kPrefixWords)
    if (word == p) return true;
  return false;
}

bool Digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

// "r8".."r15" with an optional width suffix, x86's numbered registers.
bool NumberedX86(std::string_view s, std::string_view suffix) {
  if (s.size() < 2 || s[0] != 'r') return false;
  std::string_view rest = s.substr(1);
  if (!suffix.empty()) {
    if (rest.size() <= suffix.size() || rest.substr(rest.size() - suffix.size()) != suffix)
      return false;
    rest.remove_suffix(suffix.size());
  }
  if (!Digits(rest)) return false;
  int n = std::atoi(std::string(rest).c_str());
  return n >= 8 && n <= 15;
}

// A register name followed by a number in [lo, hi]: "x17", "xmm3", "st5".
bool Numbered(std::string_view s, std::string_view stem, int lo, int hi) {
  if (s.size() <= stem.size() || s.substr(0, stem.size()) != stem) return false;
  std::string_view rest = s.substr(stem.size());
  if (!Digits(rest)) return false;
  int n = std::atoi(std::string(rest).c_str());
  return n >= lo && n <= hi;
}

bool OneOf(std::string_view s, std::initializer_list<std::string_view> names) {
  for (std::string_view n : names)
    if (s == n) return true;
  return false;
}

OperandKind RegisterKind(std::string_view s) {
  // Arm vector registers carry an arrangement ("v0.16b", "v1.s[0]"): the register is the part before.
  if (size_t dot = s.find('.'); dot != std::string_view::npos) s = s.substr(0, dot);
  if (OneOf(s, {"rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp", "xzr"}) ||
      NumberedX86(s, "") || Numbered(s, "x", 0, 30))
    return OperandKind::kReg64;
  if (OneOf(s, {"eax", "ebx", "ecx", "edx", "esi", "edi", "ebp", "esp", "wzr", "sb", "sl", "fp",
                "ip", "lr"}) ||
      NumberedX86(s, "d") || Numbered(s, "w", 0, 30) || Numbered(s, "r", 0, 7))
    return OperandKind::kReg32;
  if (OneOf(s, {"ax", "bx", "cx", "dx", "si", "di", "bp", "sp"}) || NumberedX86(s, "w"))
    return OperandKind::kReg16;
  if (OneOf(s, {"al", "bl", "cl", "dl", "ah", "bh", "ch", "dh", "sil", "dil", "bpl", "spl"}) ||
      NumberedX86(s, "b"))
    return OperandKind::kReg8;
  if (Numbered(s, "xmm", 0, 31) || Numbered(s, "q", 0, 31) || Numbered(s, "v", 0, 31))
    return OperandKind::kXmm;
  if (Numbered(s, "ymm", 0, 31)) return OperandKind::kYmm;
  if (Numbered(s, "zmm", 0, 31)) return OperandKind::kZmm;
  if (s == "st" || Numbered(s, "st", 0, 7) || Numbered(s, "mm", 0, 7)) return OperandKind::kX87;
  if (OneOf(s, {"rip", "eip", "pc", "cs", "ds", "es", "fs", "gs", "ss"}) ||
      Numbered(s, "k", 0, 7) || Numbered(s, "cr", 0, 15) || Numbered(s, "dr", 0, 15) ||
      Numbered(s, "d", 0, 31) || Numbered(s, "s", 0, 31) || Numbered(s, "h", 0, 31))
    return OperandKind::kOtherReg;
  return OperandKind::kOther;
}

// Numbered("r", 0, 7) above is A32's r0-r7; r8-r15 are x86's 64-bit registers and A32's high
// registers alike. A pattern asking for "r32" on A32 code therefore sees r8-r12 as "r64": the
// documented limitation (docs/delta.md) is that A32 patterns name such registers literally.

}  // namespace

bool IsKernelAddress(uint64_t ip, ExecMode mode) {
  switch (mode) {
    case ExecMode::k16Bit:
    case ExecMode::k32Bit:
    case ExecMode::kA32:
    case ExecMode::kT32:
      return ip >= 0xc0000000ull && ip <= 0xffffffffull;
    default:
      return (ip >> 63) != 0;
  }
}

std::optional<uint64_t> ParseNumber(std::string_view text) {
  std::string_view s = text;
  if (!s.empty() && s[0] == '#') s.remove_prefix(1);
  bool negative = false;
  if (!s.empty() && s[0] == '-') {
    negative = true;
    s.remove_prefix(1);
  }
  if (s.empty()) return std::nullopt;
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s.remove_prefix(2);
  }
  uint64_t value = 0;
  for (char c : s) {
    int digit;
    if (c >= '0' && c <= '9') digit = c - '0';
    else if (base == 16 && c >= 'a' && c <= 'f') digit = c - 'a' + 10;
    else if (base == 16 && c >= 'A' && c <= 'F') digit = c - 'A' + 10;
    else return std::nullopt;
    value = value * static_cast<uint64_t>(base) + static_cast<uint64_t>(digit);
  }
  return negative ? ~value + 1 : value;
}

Operand NormaliseOperand(std::string_view text) {
  Operand op;
  for (char c : text)
    if (!std::isspace(static_cast<unsigned char>(c)))
      op.text.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  if (op.text.find('[') != std::string::npos) {
    op.kind = OperandKind::kMem;
  } else if ((op.value = ParseNumber(op.text))) {
    op.kind = OperandKind::kImm;
  } else {
    op.kind = RegisterKind(op.text);
  }
  return op;
}

InsnText ParseInsnText(std::string_view text) {
  InsnText insn;
  size_t pos = 0;
  auto skip_blanks = [&] {
    while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos]))) ++pos;
  };
  // The mnemonic is the first word that is not a prefix.
  for (;;) {
    skip_blanks();
    size_t start = pos;
    while (pos < text.size() && !std::isspace(static_cast<unsigned char>(text[pos]))) ++pos;
    std::string word;
    for (char c : text.substr(start, pos - start))
      word.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    if (word.empty()) return insn;
    if (IsPrefixWord(word) && pos < text.size()) continue;
    insn.mnemonic = std::move(word);
    break;
  }
  skip_blanks();
  int depth = 0;
  size_t start = pos;
  for (; pos <= text.size(); ++pos) {
    char c = pos < text.size() ? text[pos] : ',';
    if (c == '[' || c == '{' || c == '(') ++depth;
    if (c == ']' || c == '}' || c == ')') --depth;
    if (c == ',' && depth <= 0) {
      std::string_view piece = text.substr(start, pos - start);
      if (piece.find_first_not_of(" \t") != std::string_view::npos)
        insn.operands.push_back(NormaliseOperand(piece));
      start = pos + 1;
    }
  }
  return insn;
}

}  // namespace ptprof::patterns
