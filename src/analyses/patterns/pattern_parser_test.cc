#include "src/analyses/patterns/pattern_parser.h"

#include <catch2/catch.hpp>

#include "src/analyses/patterns/builtin_patterns.h"

using namespace ptprof;
using namespace ptprof::patterns;

namespace {
std::string ErrorOf(std::string_view text) {
  auto p = ParsePattern("p", text);
  REQUIRE_FALSE(p);
  return p.error().message;
}
}  // namespace

TEST_CASE("every built-in parses") {
  for (const BuiltinPattern& b : BuiltinPatterns()) {
    INFO(b.name);
    CHECK(ParsePattern(std::string(b.name), b.definition));
  }
}

TEST_CASE("alternatives, sequences with bounds, operands and qualifiers") {
  auto p = ParsePattern("superCLI", "pushf* ; pop r64 ;{8} cli | cli");
  REQUIRE(p);
  REQUIRE(p->alternatives.size() == 2);
  const auto& seq = p->alternatives[0].steps;
  REQUIRE(seq.size() == 3);
  CHECK(seq[0].element.mnemonic == "pushf*");
  CHECK_FALSE(seq[0].element.operands_given);
  CHECK(seq[1].element.operands.size() == 1);
  CHECK(seq[1].element.operands[0].kind == OperandPattern::Kind::kClass);
  CHECK(seq[1].max_between == 0);
  CHECK(seq[2].max_between == 8);
  CHECK(p->alternatives[0].text == "pushf* ; pop r64 ;{8} cli");
  CHECK(p->alternatives[1].text == "cli");

  auto k = ParsePattern("k", "kernel:* ..., vec, ...");
  REQUIRE(k);
  CHECK(k->alternatives[0].steps[0].element.privilege == Privilege::kKernel);
  CHECK(k->alternatives[0].steps[0].element.operands.size() == 3);

  auto b = ParsePattern("b", "bytes: 0f 01 ?? ; user:msr daifset, #0x2");
  REQUIRE(b);
  const auto& bytes = b->alternatives[0].steps[0].element.bytes;
  REQUIRE(bytes.size() == 3);
  CHECK(bytes[0] == 0x0f);
  CHECK_FALSE(bytes[2]);
  CHECK(b->alternatives[0].steps[1].element.operands[1].literal.value == 2u);
}

TEST_CASE("parse errors name the pattern and the column") {
  CHECK(ErrorOf("") == "pattern p: column 1: expected an instruction (a mnemonic or bytes:...)");
  CHECK(ErrorOf("cli ;") == "pattern p: column 6: expected an instruction (a mnemonic or bytes:...)");
  CHECK(ErrorOf("cli || sti") == "pattern p: column 6: expected an instruction (a mnemonic or bytes:...)");
  CHECK(ErrorOf("pushf ;{x} pop") ==
        "pattern p: column 9: expected the number of instructions allowed between, as ;{N}");
  CHECK(ErrorOf("pushf ;{3 pop") == "pattern p: column 11: expected '}' to close ;{N}");
  CHECK(ErrorOf("mov rax,") == "pattern p: column 9: expected an operand");
  CHECK(ErrorOf("foo:cli") == "pattern p: column 1: unknown qualifier 'foo:' (kernel:, user: or bytes:)");
  CHECK(ErrorOf("cli$") == "pattern p: column 4: unexpected character '$' in a mnemonic");
  CHECK(ErrorOf("bytes: 0f 1") == "pattern p: column 11: expected a byte as two hex digits or ??");
  CHECK(ErrorOf("bytes: 0f1") == "pattern p: column 8: expected a byte as two hex digits or ??, separated by blanks");
  CHECK(ErrorOf("mov [rax, rbx") == "pattern p: column 5: unclosed '[' in an operand");
  CHECK(ErrorOf("mov r*x") == "pattern p: column 5: '*' stands for a whole operand, not part of one");
}

TEST_CASE("pattern names") {
  CHECK(IsPatternName("superCLI"));
  CHECK(IsPatternName("_x1"));
  CHECK_FALSE(IsPatternName("1x"));
  CHECK_FALSE(IsPatternName("a-b"));
  CHECK_FALSE(IsPatternName(""));
}
