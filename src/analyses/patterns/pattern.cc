#include "src/analyses/patterns/pattern.h"

namespace ptprof::patterns {

bool GlobMatches(std::string_view glob, std::string_view text) {
  size_t g = 0, t = 0, star = std::string_view::npos, resume = 0;
  while (t < text.size()) {
    if (g < glob.size() && glob[g] == '*') {
      star = g++;
      resume = t;
    } else if (g < glob.size() && glob[g] == text[t]) {
      ++g;
      ++t;
    } else if (star != std::string_view::npos) {
      g = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (g < glob.size() && glob[g] == '*') ++g;
  return g == glob.size();
}

namespace {

bool OperandMatches(const OperandPattern& pattern, const Operand& operand) {
  switch (pattern.kind) {
    case OperandPattern::Kind::kAny:
      return true;
    case OperandPattern::Kind::kClass:
      for (OperandKind kind : pattern.classes)
        if (kind == operand.kind) return true;
      return false;
    case OperandPattern::Kind::kLiteral:
      if (pattern.literal.value && operand.value) return *pattern.literal.value == *operand.value;
      return pattern.literal.text == operand.text;
    case OperandPattern::Kind::kAnyRun:
      return true;
  }
  return false;
}

// Operand lists with "..." (any number of operands) matched by backtracking; lists are short.
bool OperandsMatch(const std::vector<OperandPattern>& patterns, size_t p,
                   const std::vector<Operand>& operands, size_t o) {
  if (p == patterns.size()) return o == operands.size();
  if (patterns[p].kind == OperandPattern::Kind::kAnyRun) {
    for (size_t skip = o; skip <= operands.size(); ++skip)
      if (OperandsMatch(patterns, p + 1, operands, skip)) return true;
    return false;
  }
  return o < operands.size() && OperandMatches(patterns[p], operands[o]) &&
         OperandsMatch(patterns, p + 1, operands, o + 1);
}

}  // namespace

bool ElementPattern::Matches(const InsnText& insn) const {
  if (privilege == Privilege::kKernel && !insn.kernel) return false;
  if (privilege == Privilege::kUser && insn.kernel) return false;
  if (!bytes.empty()) {
    if (bytes.size() > insn.length) return false;
    for (size_t i = 0; i < bytes.size(); ++i)
      if (bytes[i] && *bytes[i] != insn.bytes[i]) return false;
    return true;
  }
  if (!GlobMatches(mnemonic, insn.mnemonic)) return false;
  return !operands_given || OperandsMatch(operands, 0, insn.operands, 0);
}

}  // namespace ptprof::patterns
