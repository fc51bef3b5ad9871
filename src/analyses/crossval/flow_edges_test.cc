#include "src/analyses/crossval/flow_edges.h"

#include <catch2/catch.hpp>

#include "src/analyses/crossval/block_testing.h"

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "src/analyses/support/random_flow_testing.h"

using namespace ptprof;
using namespace ptprof::testing;

namespace {


// The user functions 1 to 5 in "prog", 6 in "lib"; the kernel in no file.
AddressNormaliser Files() {
  AddressNormaliser n;
  n.AddMapping(-1, kUser, 5 * kUser, 0x1000, "/usr/bin/prog");
  n.AddMapping(-1, 6 * kUser, kUser, 0, "/lib/lib.so");
  return n;
}

// Everything a FlowEdges ended holds, by normalised location rather than by number.
std::string Dump(FlowEdges& flow) {
  EdgeTable& table = flow.table();
  auto where = [&](Location l) { return table.ImageName(l.image) + ":" + std::to_string(l.offset); };
  auto edge = [&](uint32_t id) {
    const auto [from, to] = table.Edge(id);
    return where(from) + ">" + where(to);
  };
  std::map<std::string, std::string> edges, ranges;
  for (uint32_t id = 0; id < flow.edges(); ++id)
    edges[edge(id)] = std::to_string(flow.EdgeCount(id)) + " from " + std::to_string(flow.SourceOf(id));
  for (const FlowEdges::RangeCount& r : flow.Ranges())
    ranges[table.ImageName(std::get<0>(r.range)) + ":" + std::to_string(std::get<1>(r.range)) + "-" +
           std::to_string(std::get<2>(r.range))] = std::to_string(r.count) + " from " + std::to_string(r.source);
  std::vector<std::string> runs(1);
  for (uint32_t id : flow.TakeSequence()) {
    if (id == kNoEdge) runs.emplace_back();
    else runs.back() += edge(id) + " ";
  }
  runs.pop_back();
  std::sort(runs.begin(), runs.end());
  std::string out = std::to_string(flow.branches()) + " branches, " + std::to_string(flow.runs()) +
                    " runs, " + std::to_string(flow.unmapped()) + " unmapped\n";
  for (const auto& [k, v] : edges) out += "edge " + k + " " + v + "\n";
  for (const auto& [k, v] : ranges) out += "range " + k + " " + v + "\n";
  for (const std::string& r : runs) out += "run " + r + "\n";
  return out;
}

}  // namespace

TEST_CASE("taken transfers become normalised edges, runs and ranges; breaks end runs") {
  const AddressNormaliser files = Files();
  FlowEdges flow(files);
  const uint64_t f = kUser;  // prog at offset 0x1000
  flow.OnEvent(BranchBlock(1, f + 0x10, f + 0x18, BlockEnd::kCondTaken));
  flow.OnEvent(BranchBlock(2, f + 0x90, f + 0x98, BlockEnd::kCall));          // another thread between
  flow.OnEvent(BranchBlock(1, f + 0x40, f + 0x44, BlockEnd::kFallThrough));   // a split: no branch
  flow.OnEvent(BranchBlock(1, f + 0x46, f + 0x4a, BlockEnd::kCondNotTaken));
  flow.OnEvent(BranchBlock(1, f + 0x4c, f + 0x50, BlockEnd::kReturn));
  flow.OnEvent(BranchBlock(2, 6 * kUser + 4, 6 * kUser + 8, BlockEnd::kJump));
  flow.OnEvent(BranchBlock(1, f + 0x20, f + 0x24, BlockEnd::kSyscall));       // breaks the run
  flow.OnEvent(BranchBlock(1, f + 0x30, f + 0x34, BlockEnd::kJump));
  flow.OnEvent(BranchBlock(1, kKernel, kKernel + 4, BlockEnd::kJump));        // into no file
  flow.OnEvent(BranchBlock(2, f + 0x300, f + 0x304, BlockEnd::kTraceStop));
  flow.OnEnd();
  CHECK(flow.branches() == 4);
  CHECK(flow.unmapped() == 1);
  CHECK(flow.runs() == 2);
  const std::string dump = Dump(flow);
  CHECK(dump.find("edge prog:4120>prog:4160 1 from 65560\n") != std::string::npos);  // 0x1018 -> 0x1040
  CHECK(dump.find("edge prog:4248>lib.so:4 1 from 65688\n") != std::string::npos);
  CHECK(dump.find("edge lib.so:8>prog:4864 1") != std::string::npos);
  // From the return's target 0x1040 to the next branch's source 0x1050, thread 1.
  CHECK(dump.find("range prog:4160-4176 1 from 65616\n") != std::string::npos);
  CHECK(dump.find("run prog:4120>prog:4160 prog:4176>prog:4128 \n") != std::string::npos);
  CHECK(dump.find("run prog:4248>lib.so:4 lib.so:8>prog:4864 \n") != std::string::npos);
}

TEST_CASE("cut into parts, the flow's edges, runs and ranges are those of the whole") {
  const AddressNormaliser files = Files();
  std::mt19937 random(12);
  for (uint32_t seed = 1; seed <= 30; ++seed) {
    const std::vector<TraceEvent> events = RandomFlow(seed).Run(seed % 3 ? 400 : 60);
    FlowEdges whole(files);
    FeedEvents(whole, events, 0, events.size(), false);
    whole.OnEnd();
    const std::string expected = Dump(whole);
    CHECK(whole.branches() > 0);
    CHECK(whole.unmapped() > 0);
    for (const bool batched : {false, true}) {
      for (const size_t parts : {size_t{2}, size_t{7}, size_t{40}, events.size()}) {
        FlowEdges in_parts(files);
        const std::vector<size_t> cuts = parts == events.size() ? [&] {
          std::vector<size_t> every(events.size() + 1);
          for (size_t i = 0; i < every.size(); ++i) every[i] = i;
          return every;
        }() : RandomCuts(events.size(), parts, random);
        const PartsFolded folded = FeedInParts(in_parts, events, cuts, batched);
        in_parts.OnEnd();
        INFO("seed " << seed << ", " << parts << " parts, batched " << batched);
        CHECK(folded.refused == 0);
        CHECK(Dump(in_parts) == expected);
      }
    }
  }
}

TEST_CASE("a run longer than a piece comes out whole, also when a part goes on with it") {
  const AddressNormaliser files = Files();
  const uint64_t f = kUser;
  // A loop of two branches, 1.5 pieces' worth in the whole flow, then as much again in a part.
  const size_t half = 3 * (size_t{1} << 18);
  auto loop = [&](FlowEdges& flow, size_t branches) {
    for (size_t i = 0; i < branches; ++i)
      flow.AddBranch(1, -1, f + (i % 2 ? 0x20 : 0x10), f + (i % 2 ? 0x08 : 0x18));
  };
  FlowEdges flow(files);
  loop(flow, half);
  std::unique_ptr<EventSink> part = flow.NewPart();
  loop(static_cast<FlowEdges&>(*part), half);
  part->OnEnd();
  flow.Fold(std::move(part));
  flow.OnEnd();
  CHECK(flow.branches() == 2 * half);
  CHECK(flow.runs() == 1);
  const EdgeSequence sequence = flow.TakeSequence();
  REQUIRE(sequence.size() == 2 * half + 1);
  CHECK(sequence.back() == kNoEdge);
  const uint32_t first = sequence[0], second = sequence[1];
  CHECK(first != second);
  size_t alternating = 0;
  for (size_t i = 0; i + 1 < sequence.size(); ++i)
    alternating += sequence[i] == (i % 2 ? second : first);
  CHECK(alternating == 2 * half);
}
