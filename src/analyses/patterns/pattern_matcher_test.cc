#include "src/analyses/patterns/pattern_matcher.h"

#include <catch2/catch.hpp>

#include "src/analyses/patterns/pattern_parser.h"

using namespace ptprof;
using namespace ptprof::patterns;

namespace {

Pattern P(const std::string& name, const std::string& text) {
  auto p = ParsePattern(name, text);
  REQUIRE(p);
  return *p;
}

// Feeds disassembly lines; returns, per line, the alternative of pattern 0 that ended there.
std::vector<int> Run(const PatternMatcher& m, const std::vector<std::string>& lines) {
  auto state = m.NewState();
  std::vector<int> matched, out;
  for (const std::string& line : lines) {
    m.Step(state, m.AtomsOf(ParseInsnText(line)), matched);
    out.push_back(matched[0]);
  }
  return out;
}

}  // namespace

TEST_CASE("superCLI: the sequence is credited before the bare cli") {
  auto m = PatternMatcher::Compile({P("superCLI", "pushf* ; pop r64 ;{2} cli | cli")});
  REQUIRE(m);
  CHECK(Run(*m, {"pushfq", "pop rax", "mov rbx, rax", "cli"}) == std::vector<int>{-1, -1, -1, 0});
  // Three instructions in between is one too many: only the bare cli matches.
  CHECK(Run(*m, {"pushfq", "pop rax", "nop", "nop", "nop", "cli"}) ==
        std::vector<int>{-1, -1, -1, -1, -1, 1});
  // The first two steps must be adjacent.
  CHECK(Run(*m, {"pushfq", "nop", "pop rax", "cli"}) == std::vector<int>{-1, -1, -1, 1});
  // pop into a 32-bit register is not r64.
  CHECK(Run(*m, {"pushfq", "pop eax", "cli"}) == std::vector<int>{-1, -1, 1});
}

TEST_CASE("a one-instruction alternative matches alone, the first one when several do") {
  // sti begins no longer alternative: nothing in progress, it matches by itself (the second of
  // the two that name it); cli begins one, so it goes through the general steps.
  auto m = PatternMatcher::Compile({P("p", "cli ; nop | sti | cli | sti")});
  REQUIRE(m);
  CHECK(Run(*m, {"sti", "sti", "nop"}) == std::vector<int>{1, 1, -1});
  CHECK(Run(*m, {"cli", "nop", "sti"}) == std::vector<int>{2, 0, 1});
  auto state = m->NewState();
  std::vector<int> matched;
  CHECK(m->Step(state, m->AtomsOf(ParseInsnText("sti")), matched));
  CHECK(state.Idle());  // nothing left in progress
  CHECK(m->Step(state, m->AtomsOf(ParseInsnText("cli")), matched));
  CHECK(!state.Idle());  // cli ; nop in progress
}

TEST_CASE("operand constraints: classes, literals by value, any and any-run") {
  auto m = PatternMatcher::Compile({P("p", "msr daifset, #2 | msr daif, r64 | * ..., xmm, ...")});
  REQUIRE(m);
  CHECK(Run(*m, {"msr daifset, #0x2", "msr daifset, #3", "msr daif, x1", "msr daif, w1",
                 "addps xmm0, xmm1", "vzeroupper"}) == std::vector<int>{0, -1, 1, -1, 2, -1});
}

TEST_CASE("Skip counts instructions without atoms against the bound") {
  auto m = PatternMatcher::Compile({P("p", "pause ;{3} lfence")});
  REQUIRE(m);
  std::vector<int> matched;
  auto state = m->NewState();
  uint64_t pause = m->AtomsOf(ParseInsnText("pause")), lfence = m->AtomsOf(ParseInsnText("lfence"));
  m->Step(state, pause, matched);
  CHECK_FALSE(state.Idle());
  m->Skip(state, 3);
  CHECK(m->Step(state, lfence, matched));
  CHECK(matched[0] == 0);
  m->Step(state, pause, matched);
  m->Skip(state, 4);
  CHECK(state.Idle());
  CHECK_FALSE(m->Step(state, lfence, matched));
  m->Step(state, pause, matched);
  m->Reset(state);
  CHECK(state.Idle());
}

TEST_CASE("patterns share atoms; more than 64 distinct elements is an error") {
  auto m = PatternMatcher::Compile({P("a", "cli | sti"), P("b", "sti")});
  REQUIRE(m);
  CHECK(m->atom_count() == 2);
  std::string many;
  for (int i = 0; i < 65; ++i) many += (i ? " | op" : "op") + std::to_string(i);
  auto too_many = PatternMatcher::Compile({P("many", many)});
  REQUIRE_FALSE(too_many);
  CHECK(too_many.error().message.find("more than 64") != std::string::npos);
}

TEST_CASE("Horizon: how long a sequence in progress can last") {
  auto m = PatternMatcher::Compile({P("a", "pushf* ; pop r64 ;{8} cli | cli"), P("b", "push r64 ; popf* | sti")});
  REQUIRE(m);
  CHECK(m->Horizon() == 1 + 9);  // pop right after pushf, then up to 8 others before cli
  auto single = PatternMatcher::Compile({P("c", "cli")});
  REQUIRE(single);
  CHECK(single->Horizon() == 0);
  // No sequence begun before the horizon survives it: a pushf, then 10 unrelated instructions.
  auto state = m->NewState();
  std::vector<int> matched;
  m->Step(state, m->AtomsOf(ParseInsnText("pushfq")), matched);
  CHECK_FALSE(state.Idle());
  m->Step(state, m->AtomsOf(ParseInsnText("pop rax")), matched);
  m->Skip(state, m->Horizon() - 1);
  CHECK(state.Idle());
}
