#include "src/analyses/crossval/flow_edges.h"

#include <catch2/catch.hpp>

#include "src/analyses/crossval/block_testing.h"
#include "src/analyses/crossval/burst_matcher.h"
#include "src/model/taken_branches.h"

#include <algorithm>
#include <map>
#include <memory>
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
  std::string out = std::to_string(flow.branches()) + " branches, " + std::to_string(flow.runs()) +
                    " runs, " + std::to_string(flow.unmapped()) + " unmapped\n";
  for (const auto& [k, v] : edges) out += "edge " + k + " " + v + "\n";
  for (const auto& [k, v] : ranges) out += "range " + k + " " + v + "\n";
  return out;
}

// A burst as normalised branches, numbered in a flow's table before its events.
using NormalBurst = std::vector<std::pair<NormalAddress, NormalAddress>>;

// `bursts` numbered in `flow`'s table and looked for in its flow.
struct Looking {
  std::unique_ptr<BurstMatcher> matcher = std::make_unique<BurstMatcher>();
  std::vector<uint32_t> ids;
  Looking(FlowEdges& flow, const std::vector<NormalBurst>& bursts) {
    EdgeTable& table = flow.table();
    for (const NormalBurst& burst : bursts) {
      std::vector<uint32_t> edges;
      for (const auto& [from, to] : burst)
        edges.push_back(table.EdgeId(table.Locate(from), table.Locate(to), true));
      ids.push_back(matcher->Add(edges));
    }
    matcher->Build();
    flow.LookFor(*matcher);
  }
  std::string Found() const {
    std::string out;
    for (uint32_t id : ids) out += matcher->Found(id) ? '1' : '0';
    return out;
  }
};

// The flow's runs of normalised branches, thread by thread, as the taken-branch rule makes them
// (src/model/taken_branches.h): the reference the bursts are looked for in.
std::vector<NormalBurst> RunsOf(const std::vector<TraceEvent>& events, const AddressNormaliser& files) {
  struct Walk {
    PendingBranch pending;
    int32_t pid = -1;
    NormalBurst run;
  };
  std::map<int64_t, Walk> walks;
  std::vector<NormalBurst> runs;
  auto close = [&](Walk& w) {
    if (!w.run.empty()) runs.push_back(std::move(w.run));
    w.run.clear();
  };
  for (const TraceEvent& event : events) {
    Walk& w = walks[FlowThread(event.header.cpu, event.header.tid)];
    if (const auto* block = std::get_if<ExecBlock>(&event.body)) {
      const BlockEndRole role =
          w.pending.Follow(block->first_ip, block->last_ip, block->end, [&](uint64_t from, uint64_t to) {
            auto f = files.Normalise(w.pid, from);
            auto t = files.Normalise(w.pid, to);
            if (f && t) w.run.emplace_back(*f, *t);
            else close(w);
          });
      if (role == BlockEndRole::kTaken) w.pid = event.header.pid;
      if (role == BlockEndRole::kBreaks) close(w);
    } else if (BreaksBranchRun(event)) {
      w.pending.taken = false;
      close(w);
    }
  }
  for (auto& [thread, w] : walks) close(w);
  return runs;
}

// Bursts of one to six branches from `runs`: windows of a run, windows across two runs one after
// the other (which the flow may not hold), and windows with one branch of another run.
std::vector<NormalBurst> BurstsFrom(const std::vector<NormalBurst>& runs, std::mt19937& random) {
  std::vector<NormalBurst> bursts;
  NormalBurst all;
  for (const NormalBurst& run : runs) all.insert(all.end(), run.begin(), run.end());
  if (all.empty()) return bursts;
  for (int i = 0; i < 60; ++i) {
    const size_t length = 1 + random() % 6;
    const size_t start = random() % all.size();
    NormalBurst burst(all.begin() + start, all.begin() + std::min(all.size(), start + length));
    if (i % 3 == 2) burst[random() % burst.size()] = all[random() % all.size()];
    bursts.push_back(std::move(burst));
  }
  return bursts;
}

// Which of `bursts` occur contiguously inside one of `runs`, as Looking::Found gives it.
std::string Occurring(const std::vector<NormalBurst>& runs, const std::vector<NormalBurst>& bursts) {
  std::string out;
  for (const NormalBurst& burst : bursts) {
    bool found = false;
    for (const NormalBurst& run : runs)
      found = found || std::search(run.begin(), run.end(), burst.begin(), burst.end()) != run.end();
    out += found ? '1' : '0';
  }
  return out;
}

}  // namespace

TEST_CASE("taken transfers become normalised edges, runs, ranges and bursts found; breaks end runs") {
  const AddressNormaliser files = Files();
  FlowEdges flow(files);
  const uint64_t f = kUser;  // prog at offset 0x1000
  auto prog = [](uint64_t offset) { return NormalAddress{"prog", offset}; };
  auto lib = [](uint64_t offset) { return NormalAddress{"lib.so", offset}; };
  const Looking looking(flow, {
      {{prog(4120), prog(4160)}, {prog(4176), prog(4128)}},  // thread 1's run
      {{prog(4248), lib(4)}, {lib(8), prog(4864)}},          // thread 2's
      {{prog(4120), prog(4160)}, {prog(4248), lib(4)}},      // one of each thread
      {{prog(4176), prog(4128)}, {prog(4144), prog(4128)}},  // across the syscall (no such edge)
      {{lib(8), prog(4864)}},
  });
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
  CHECK(looking.Found() == "11001");
}

TEST_CASE("cut into parts, the flow's edges, runs, ranges and bursts found are those of the whole") {
  const AddressNormaliser files = Files();
  std::mt19937 random(12);
  for (uint32_t seed = 1; seed <= 30; ++seed) {
    const std::vector<TraceEvent> events = RandomFlow(seed).Run(seed % 3 ? 400 : 60);
    const std::vector<NormalBurst> runs = RunsOf(events, files);
    const std::vector<NormalBurst> bursts = BurstsFrom(runs, random);
    const std::string occurring = Occurring(runs, bursts);
    FlowEdges whole(files);
    const Looking whole_looking(whole, bursts);
    FeedEvents(whole, events, 0, events.size(), false);
    whole.OnEnd();
    const std::string expected = Dump(whole);
    CHECK(whole.runs() == runs.size());
    CHECK(whole_looking.Found() == occurring);
    CHECK(occurring.find('1') != std::string::npos);
    CHECK(occurring.find('0') != std::string::npos);
    CHECK(whole.branches() > 0);
    CHECK(whole.unmapped() > 0);
    for (const bool batched : {false, true}) {
      for (const size_t parts : {size_t{2}, size_t{7}, size_t{40}, events.size()}) {
        FlowEdges in_parts(files);
        const Looking looking(in_parts, bursts);
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
        CHECK(looking.Found() == occurring);
      }
    }
  }
}

TEST_CASE("a burst across the seams of parts is found, also through a part shorter than a burst") {
  const AddressNormaliser files = Files();
  const uint64_t f = kUser;
  auto prog = [](uint64_t offset) { return NormalAddress{"prog", 0x1000 + offset}; };
  // The branches x -> x + 8 at x = 0x10, 0x20, ...: A = 0x10, B = 0x20, and so on.
  auto branch = [&](FlowEdges& flow, uint64_t x) { flow.AddBranch(1, -1, f + x, f + x + 8); };
  auto edge = [&](uint64_t x) { return std::make_pair(prog(x), prog(x + 8)); };
  FlowEdges flow(files);
  const Looking looking(flow, {
      {edge(0x20), edge(0x10), edge(0x30), edge(0x40)},  // B A | C D: across the first seam
      {edge(0x10), edge(0x30)},                          // A | C
      {edge(0x30), edge(0x10)},                          // C A: nowhere
      {edge(0x40), edge(0x50), edge(0x60), edge(0x70)},  // D | E | F G: through a part of one
      {edge(0x60), edge(0x70), edge(0x80)},              // F G | H: across a break in a part
      {edge(0x80), edge(0x90)},                          // H | I: the part's run after the break
  });
  for (int i = 0; i < 1000; ++i) branch(flow, i % 2 ? 0x10 : 0x20);  // B A B A ... A
  auto part = [&](std::initializer_list<uint64_t> xs, bool break_after_first_two = false) {
    std::unique_ptr<EventSink> sink = flow.NewPart();
    auto& p = static_cast<FlowEdges&>(*sink);
    int n = 0;
    for (uint64_t x : xs) {
      branch(p, x);
      if (break_after_first_two && ++n == 2) p.AddBreak(1);
    }
    sink->OnEnd();
    flow.Fold(std::move(sink));
  };
  part({0x30, 0x40});
  part({0x50});
  part({0x60, 0x70});
  part({0x70, 0x70, 0x80, 0x90}, true);  // G G, a break, H I
  flow.OnEnd();
  CHECK(flow.branches() == 1000 + 2 + 1 + 2 + 4);
  CHECK(flow.runs() == 2);
  CHECK(looking.Found() == "110101");
}
