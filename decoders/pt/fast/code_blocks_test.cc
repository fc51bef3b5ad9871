#include "decoders/pt/fast/code_blocks.h"

#include <catch2/catch.hpp>

#include "decoders/pt/fast/sample_graph_testing.h"

using namespace ptprof;
using namespace ptprof::pt;
using namespace ptprof::pt::testing;

namespace {

using Graph = SampleGraph;

}  // namespace

TEST_CASE("A block ends at the first instruction whose successor the trace decides or that "
          "ends a model block",
          "[code_blocks]") {
  Graph graph;
  std::string why;
  const fast::CodeBlock* block = graph.blocks->Block(0x1000, ptem_64bit, why);
  REQUIRE(block);
  CHECK(block->first_ip == 0x1000);
  CHECK(block->last_ip == 0x1001);
  CHECK(block->ninsn == 2);
  CHECK(block->last.kind == X86Kind::kCondJump);
  CHECK(graph.blocks->Block(0x1000, ptem_64bit, why) == block);  // decoded once
  const fast::CodeBlock* call = graph.blocks->Block(0x1003, ptem_64bit, why);
  REQUIRE(call);
  CHECK(call->last_ip == 0x1005);
  CHECK(call->ninsn == 3);
  CHECK(fast::IsDirectCallOrJump(call->last));
}

TEST_CASE("Code decoded in one execution mode is refused in another where they overlap",
          "[code_blocks]") {
  // libipt's block cache would reuse the first mode's decode there: the engine leaves that code
  // to libipt.
  Graph graph;
  std::string why;
  REQUIRE(graph.blocks->Block(0x1000, ptem_32bit, why));      // 1000-1001
  REQUIRE(graph.blocks->Insn(0x1010, ptem_32bit, why));       // 1010
  CHECK(graph.blocks->Block(0x1000, ptem_64bit, why) == nullptr);
  CHECK(why == "code at 0x1000 decoded in another execution mode before");
  why.clear();
  CHECK(graph.blocks->Block(0x1001, ptem_64bit, why) == nullptr);  // inside 1000-1001
  CHECK(graph.blocks->Insn(0x1010, ptem_64bit, why) == nullptr);
  // Code no other mode has touched decodes in the new mode; after that, the first mode is
  // refused there in turn.
  why.clear();
  const fast::CodeBlock* apart = graph.blocks->Block(0x1003, ptem_64bit, why);
  REQUIRE(apart);
  CHECK(why.empty());
  CHECK(graph.blocks->Block(0x1004, ptem_32bit, why) == nullptr);
  // The first mode goes on where it was.
  CHECK(graph.blocks->Block(0x1000, ptem_32bit, why) != nullptr);
  CHECK(graph.blocks->Insn(0x1011, ptem_32bit, why) != nullptr);
}

TEST_CASE("Code in one execution mode only is never refused", "[code_blocks]") {
  Graph graph;
  std::string why;
  for (uint64_t ip : {0x1000, 0x1001, 0x1003, 0x1010, 0x1011})
    CHECK(graph.blocks->Block(ip, ptem_64bit, why) != nullptr);
  CHECK(why.empty());
}
