// CallStackBuilder in parts: whatever the cuts, the trees, repairs and block counts equal those of
// the whole stream taken by one builder.
#include "src/analyses/support/call_stack.h"

#include <catch2/catch.hpp>

#include <random>

#include "src/analyses/support/random_flow_testing.h"

namespace ptprof {
namespace {

using testing::FeedEvents;
using testing::RandomFlow;
using testing::RandomFlowSymbols;

struct Outcome {
  std::string tree, repairs;
  uint64_t blocks = 0;
  size_t folded = 0, refused = 0;
};

Outcome Finish(CallStackBuilder& builder) {
  builder.OnEnd();
  Outcome out;
  for (int32_t lane : builder.Lanes()) {
    out.tree += "lane " + std::to_string(lane) + "\n";
    testing::DumpTree(builder.TreeOf(lane).root(), 0, out.tree);
  }
  out.repairs = RepairCountsJson(builder.repairs());
  out.blocks = builder.blocks();
  return out;
}

Outcome Whole(const SymbolTable* symbols, const std::vector<TraceEvent>& events, bool batched) {
  CallStackBuilder builder({symbols, {}});
  FeedEvents(builder, events, 0, events.size(), batched);
  return Finish(builder);
}

// As a decode in parts does: a part per stretch, folded in order where the builder can, else
// its events taken directly.
Outcome InParts(const SymbolTable* symbols, const std::vector<TraceEvent>& events,
                const std::vector<size_t>& cuts, bool batched) {
  CallStackBuilder builder({symbols, {}});
  const testing::PartsFolded count = testing::FeedInParts(builder, events, cuts, batched);
  CHECK(count.unexplained == 0);  // every refusal says why
  Outcome out = Finish(builder);
  out.folded = count.folded;
  out.refused = count.refused;
  return out;
}

// The stream cut in two at every event gives what it gives whole; returns the parts folded.
size_t RequireSameCutAnywhere(const SymbolTable& symbols, const std::vector<TraceEvent>& events) {
  const Outcome whole = Whole(&symbols, events, false);
  size_t folded = 0;
  for (size_t cut = 1; cut < events.size(); ++cut) {
    INFO("cut at " << cut);
    const Outcome got = InParts(&symbols, events, {0, cut, events.size()}, false);
    REQUIRE(got.tree == whole.tree);
    REQUIRE(got.repairs == whole.repairs);
    REQUIRE(got.blocks == whole.blocks);
    folded += got.folded;
  }
  return folded;
}

}  // namespace

TEST_CASE("a call stack built in parts is the one built from the whole stream", "[parts]") {
  const SymbolTable symbols = RandomFlowSymbols();
  size_t folded = 0, refused = 0;
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    const std::vector<TraceEvent> events = RandomFlow(seed).Run(3000);
    for (const SymbolTable* table : {&symbols, static_cast<const SymbolTable*>(nullptr)})
      for (bool batched : {false, true}) {
        const Outcome whole = Whole(table, events, batched);
        for (const std::vector<size_t>& cuts : testing::SomeRandomCuts(events.size(), seed)) {
          INFO("seed " << seed << (table ? "" : ", no symbols") << (batched ? ", batched" : "")
                       << ", " << cuts.size() - 1 << " parts");
          const Outcome got = InParts(table, events, cuts, batched);
          REQUIRE(got.tree == whole.tree);
          REQUIRE(got.repairs == whole.repairs);
          REQUIRE(got.blocks == whole.blocks);
          folded += got.folded;
          refused += got.refused;
        }
      }
  }
  // Most parts guess right. Some cannot: this flow's oddities (a return no frame expects, a jump
  // into another function, a return to user space from deep in the kernel, a thread's first
  // part) come often, and the parts are short.
  CHECK(folded > refused);
  CHECK(refused > 0);
}

TEST_CASE("blocks in batches fold in the parts that blocks one by one fold in", "[parts]") {
  // OnBlocks' own moves must guess a part's stack exactly as TakeBlock does: a guess made from
  // another block than the pending one fails the fold, and the part is decoded again.
  const SymbolTable symbols = RandomFlowSymbols();
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    const std::vector<TraceEvent> events = RandomFlow(seed).Run(3000);
    for (const std::vector<size_t>& cuts : testing::SomeRandomCuts(events.size(), seed)) {
      INFO("seed " << seed << ", " << cuts.size() - 1 << " parts");
      const Outcome one_by_one = InParts(&symbols, events, cuts, false);
      const Outcome batched = InParts(&symbols, events, cuts, true);
      REQUIRE(batched.folded == one_by_one.folded);
      REQUIRE(batched.refused == one_by_one.refused);
    }
  }
}

TEST_CASE("a call stack cut at every event is the one of the whole stream", "[parts]") {
  const std::vector<TraceEvent> events = RandomFlow(99).Run(600);
  // Beyond the first parts, which always fold.
  CHECK(RequireSameCutAnywhere(RandomFlowSymbols(), events) > events.size());
}

TEST_CASE("a per-CPU call stack whose threads come from context switches, in parts", "[parts]") {
  // The random flow's threads on one CPU: blocks carry no thread, switches say which runs.
  const SymbolTable symbols = RandomFlowSymbols();
  std::vector<TraceEvent> events;
  int32_t running = kUnknownId;
  for (TraceEvent event : testing::RandomFlow(5).Run(700)) {
    const int32_t tid = event.header.tid;
    event.header.tid = kUnknownId;
    event.header.cpu = 0;
    if (tid != running) {
      TraceEvent to = event;
      to.body = ContextSwitch{ContextSwitch::Kind::kSideband, 0, false, tid, tid, 0, false};
      events.push_back(to);
      running = tid;
    }
    events.push_back(event);
  }
  const Outcome whole = Whole(&symbols, events, false);
  CHECK(whole.tree.find("lane 7") != std::string::npos);
  CHECK(whole.tree.find("lane 8") != std::string::npos);
  // A part whose first blocks come before its first switch cannot know their thread: refused.
  CHECK(RequireSameCutAnywhere(symbols, events) > events.size());
}

}  // namespace ptprof
