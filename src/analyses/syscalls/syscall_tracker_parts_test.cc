// SyscallTracker over a CallStackBuilder in parts: whatever the cuts, the same syscall instances
// (every field and kernel tree) in the same order, and the same counts, as over the whole stream.
#include "src/analyses/syscalls/syscall_tracker.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <random>

#include "src/analyses/support/random_flow_testing.h"

namespace ptprof::syscalls {
namespace {

using ptprof::testing::FeedEvents;
using ptprof::testing::RandomFlow;
using ptprof::testing::RandomFlowSymbols;

std::string Describe(const SyscallInstance& s) {
  std::string out = s.name + " nr " + std::to_string(s.number) + " (" + s.number_source +
                    ") tid " + std::to_string(s.tid) + " at " + std::to_string(s.syscall_ip) +
                    " from " + s.caller + " start " +
                    (s.time_known ? std::to_string(s.start_ns) : std::string("?")) +
                    " latency " + std::to_string(s.latency_ns) + " user " +
                    std::to_string(s.user_insns) + " kernel " + std::to_string(s.kernel_insns) +
                    (s.kernel_traced ? " traced\n" : "\n");
  testing::DumpTree(s.kernel_tree.root(), 1, out);
  return out;
}

struct Seen {
  std::vector<std::string> instances;
  uint64_t cut_by_gap = 0, open_at_end = 0;
  size_t folded = 0, refused = 0;
  uint64_t gone_on = 0;
};

// The tracker's instances over the events, cut at `cuts` (none: one stream), each part folded
// where the builder can, else its events taken directly.
Seen Track(const SymbolTable& symbols, const std::vector<TraceEvent>& events,
           const std::vector<size_t>& cuts, bool batched) {
  SyscallTracker tracker(SyscallArch::kX86_64, nullptr);
  CallStackBuilder builder({&symbols, {}});
  builder.AddObserver(&tracker);
  REQUIRE(builder.TakesParts());
  Seen seen;
  if (cuts.empty()) FeedEvents(builder, events, 0, events.size(), batched);
  const ptprof::testing::PartsFolded count =
      ptprof::testing::FeedInParts(builder, events, cuts, batched);
  seen.folded = count.folded;
  seen.refused = count.refused;
  CHECK(count.unexplained == 0);  // every refusal says why
  builder.OnEnd();
  tracker.Finish();
  for (const SyscallInstance& s : tracker.instances()) seen.instances.push_back(Describe(s));
  seen.cut_by_gap = tracker.counts().cut_by_gap;
  seen.open_at_end = tracker.counts().open_at_end;
  seen.gone_on = tracker.gone_on();
  return seen;
}

void RequireSame(const Seen& whole, const Seen& got) {
  REQUIRE(got.instances.size() == whole.instances.size());
  for (size_t i = 0; i < whole.instances.size(); ++i) {
    INFO("instance " << i);
    REQUIRE(got.instances[i] == whole.instances[i]);
  }
  REQUIRE(got.cut_by_gap == whole.cut_by_gap);
  REQUIRE(got.open_at_end == whole.open_at_end);
}

}  // namespace

TEST_CASE("syscalls tracked in parts are those of the whole stream", "[parts]") {
  const SymbolTable symbols = RandomFlowSymbols();
  size_t instances = 0;
  const ptprof::testing::PartsTally parts = ptprof::testing::CompareRandomFlowsInParts(
      [&](const std::vector<TraceEvent>& events, const std::vector<size_t>& cuts, bool batched) {
        return Track(symbols, events, cuts, batched);
      },
      RequireSame, [&](const Seen& whole) { instances += whole.instances.size(); });
  CHECK(instances > 1000);
  // Fewer parts fold than for the call stacks alone: where this flow's oddities leave a syscall
  // frame on the stack as user code runs, a part that began there is refused.
  CHECK(2 * parts.folded > parts.refused);
  CHECK(parts.gone_on > 50);  // parts that began inside a syscall, folded
}

TEST_CASE("syscalls tracked in a stream cut at every event are those of the whole", "[parts]") {
  const SymbolTable symbols = RandomFlowSymbols();
  const auto [whole, parts] = ptprof::testing::CompareCutAtEveryEvent(
      [&](const std::vector<TraceEvent>& events, const std::vector<size_t>& cuts, bool batched) {
        return Track(symbols, events, cuts, batched);
      },
      RequireSame);
  CHECK(parts.gone_on > 20);
}

}  // namespace ptprof::syscalls
