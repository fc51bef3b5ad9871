#include "src/analyses/crossval/flow_branches.h"

#include <catch2/catch.hpp>

#include "src/analyses/crossval/block_testing.h"

#include <vector>

using namespace ptprof;
using ptprof::testing::BranchBlock;

TEST_CASE("taken transfers become branches to the next block of the same thread") {
  std::vector<std::pair<uint64_t, uint64_t>> got;
  int breaks = 0;
  FlowBranches sink([&](const FlowBranchSite&, const BranchRecord& r) { got.push_back({r.from, r.to}); },
                    [&](int64_t) { ++breaks; });
  sink.OnEvent(BranchBlock(1, 0x10, 0x18, BlockEnd::kCondTaken));
  sink.OnEvent(BranchBlock(2, 0x90, 0x98, BlockEnd::kCall));      // another thread in between
  sink.OnEvent(BranchBlock(1, 0x40, 0x44, BlockEnd::kFallThrough));  // a split: no branch
  sink.OnEvent(BranchBlock(1, 0x46, 0x4a, BlockEnd::kCondNotTaken));
  sink.OnEvent(BranchBlock(1, 0x4c, 0x50, BlockEnd::kReturn));
  sink.OnEvent(BranchBlock(2, 0x200, 0x204, BlockEnd::kJump));
  sink.OnEvent(BranchBlock(1, 0x20, 0x24, BlockEnd::kSyscall));  // breaks the run
  sink.OnEvent(BranchBlock(1, 0x30, 0x34, BlockEnd::kJump));
  TraceEvent gap;
  gap.header.tid = 1;
  gap.body = TraceGap{};
  sink.OnEvent(gap);
  sink.OnEvent(BranchBlock(1, 0x60, 0x64, BlockEnd::kTraceStop));
  sink.OnEnd();
  REQUIRE(got.size() == 3);
  CHECK(got[0] == std::pair<uint64_t, uint64_t>{0x18, 0x40});
  CHECK(got[1] == std::pair<uint64_t, uint64_t>{0x98, 0x200});
  CHECK(got[2] == std::pair<uint64_t, uint64_t>{0x50, 0x20});
  CHECK(sink.branches() == 3);
  CHECK(breaks >= 3);
}
