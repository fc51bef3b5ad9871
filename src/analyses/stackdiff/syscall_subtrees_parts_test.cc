// SyscallSubtrees over a CallStackBuilder in parts: whatever the cuts, the same merged tree (its
// children in the same order), instances and counts as over the whole stream.
#include "src/analyses/stackdiff/syscall_subtrees.h"

#include <catch2/catch.hpp>

#include <random>

#include "src/analyses/support/random_flow_testing.h"

namespace ptprof::stackdiff {
namespace {

using ptprof::testing::FeedEvents;
using ptprof::testing::RandomFlow;
using ptprof::testing::RandomFlowSymbols;

struct Seen {
  std::string tree;
  uint64_t instances = 0, incomplete = 0, gone_on = 0;
  std::map<std::string, uint64_t> seen;
  size_t folded = 0, refused = 0;
};

// The getpid subtrees over the events, cut at `cuts` (none: one stream), each part folded where
// the builder can, else its events taken directly.
Seen Capture(const SymbolTable& symbols, const std::vector<TraceEvent>& events,
             const std::vector<size_t>& cuts, bool batched) {
  SyscallSubtrees subtrees("getpid");
  CallStackBuilder builder({&symbols, {}});
  builder.AddObserver(&subtrees);
  REQUIRE(builder.TakesParts());
  Seen seen;
  if (cuts.empty()) FeedEvents(builder, events, 0, events.size(), batched);
  const ptprof::testing::PartsFolded count =
      ptprof::testing::FeedInParts(builder, events, cuts, batched);
  seen.folded = count.folded;
  seen.refused = count.refused;
  CHECK(count.unexplained == 0);  // every refusal says why
  builder.OnEnd();
  ptprof::testing::DumpTree(subtrees.Tree().root(), 0, seen.tree);
  seen.instances = subtrees.instances();
  seen.incomplete = subtrees.incomplete();
  seen.seen = subtrees.seen();
  seen.gone_on = subtrees.gone_on();
  return seen;
}

void RequireSame(const Seen& whole, const Seen& got) {
  REQUIRE(got.tree == whole.tree);
  REQUIRE(got.instances == whole.instances);
  REQUIRE(got.incomplete == whole.incomplete);
  REQUIRE(got.seen == whole.seen);
}

}  // namespace

TEST_CASE("syscall subtrees in parts are those of the whole stream", "[parts]") {
  const SymbolTable symbols = RandomFlowSymbols();
  uint64_t instances = 0;
  const ptprof::testing::PartsTally parts = ptprof::testing::CompareRandomFlowsInParts(
      [&](const std::vector<TraceEvent>& events, const std::vector<size_t>& cuts, bool batched) {
        return Capture(symbols, events, cuts, batched);
      },
      RequireSame, [&](const Seen& whole) { instances += whole.instances; });
  CHECK(instances > 300);
  CHECK(2 * parts.folded > parts.refused);
  CHECK(parts.gone_on > 50);  // parts that began inside a syscall, folded
}

TEST_CASE("syscall subtrees of a stream cut at every event are those of the whole", "[parts]") {
  const SymbolTable symbols = RandomFlowSymbols();
  const auto [whole, parts] = ptprof::testing::CompareCutAtEveryEvent(
      [&](const std::vector<TraceEvent>& events, const std::vector<size_t>& cuts, bool batched) {
        return Capture(symbols, events, cuts, batched);
      },
      RequireSame);
  CHECK(whole.instances >= 2);
  CHECK(parts.gone_on > 20);
}

}  // namespace ptprof::stackdiff
