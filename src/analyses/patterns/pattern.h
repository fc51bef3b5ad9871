#pragma once
// Pattern is the parsed form of one instruction pattern (docs/delta.md): alternatives, each a
// sequence of instruction elements with a bound on the other instructions allowed between two
// consecutive elements. An element is a mnemonic (with a '*' glob) and optional operand
// constraints, or a raw byte pattern, optionally restricted to kernel or user addresses.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "src/analyses/patterns/insn_text.h"

namespace ptprof::patterns {

// One operand constraint: a class (r64, imm, mem, xmm, vec, ...), any one operand ("*"), any
// number of operands ("..."), or a literal compared with the normalised operand text (numbers by
// value).
struct OperandPattern {
  enum class Kind : uint8_t { kLiteral, kAny, kAnyRun, kClass };
  Kind kind = Kind::kLiteral;
  Operand literal;                        // kLiteral
  std::vector<OperandKind> classes;       // kClass: any of these kinds
};

enum class Privilege : uint8_t { kAny, kKernel, kUser };

struct ElementPattern {
  Privilege privilege = Privilege::kAny;
  // A raw byte pattern when `bytes` is not empty: the instruction's encoding starts with these
  // bytes (nullopt: "??", any byte). Else a mnemonic glob and operands.
  std::vector<std::optional<uint8_t>> bytes;
  std::string mnemonic;                   // lower case; '*' matches any run of characters
  bool operands_given = false;            // false: any operands
  std::vector<OperandPattern> operands;
  std::string text;                       // as written, for messages and reports

  bool Matches(const InsnText& insn) const;
};

struct SequenceStep {
  ElementPattern element;
  uint32_t max_between = 0;  // other instructions allowed between the previous step and this one
};

struct Alternative {
  std::vector<SequenceStep> steps;
  std::string text;  // as written
};

struct Pattern {
  std::string name;
  std::string definition;
  std::vector<Alternative> alternatives;
};

// Whether `text` matches the glob `glob` ('*' = any run of characters).
bool GlobMatches(std::string_view glob, std::string_view text);

}  // namespace ptprof::patterns
