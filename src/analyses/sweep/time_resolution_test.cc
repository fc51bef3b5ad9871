#include "src/analyses/sweep/time_resolution.h"

#include <catch2/catch.hpp>

using namespace ptprof;
using namespace ptprof::sweep;

namespace {

TraceEvent Block(uint64_t tsc, uint32_t insns) {
  TraceEvent e;
  e.header.tsc = tsc;
  ExecBlock b;
  b.insns = insns;
  e.body = b;
  return e;
}

}  // namespace

TEST_CASE("lower median is Sort[(n-1)/2]") {
  CHECK(LowerMedian({}) == 0);
  CHECK(LowerMedian({5}) == 5);
  CHECK(LowerMedian({4, 1, 3, 2}) == 2);
  CHECK(LowerMedian({9, 1, 5}) == 5);
}

TEST_CASE("timed events are blocks where the decoded time moved") {
  TimeResolution r(0.5);
  // Time 100 for three blocks (10 insns each), then 140 (2 blocks), then 200.
  for (uint64_t t : {100, 100, 100, 140, 140, 200}) r.OnEvent(Block(t, 10));
  ResolutionSummary s = r.Summary();
  CHECK(s.blocks == 6);
  CHECK(s.insns == 60);
  CHECK(s.timed_events == 3);
  REQUIRE(s.deltas == 2);
  // deltas: (40 ticks, 30 insns) and (60 ticks, 20 insns); lower medians 20 ns and 20 insns.
  CHECK(s.median_ns == 20);
  CHECK(s.median_insns == 20);
}

TEST_CASE("blocks without time and stream starts") {
  TimeResolution r(1.0);
  r.OnEvent(Block(kUnknownTime, 7));
  r.OnEvent(Block(10, 1));
  r.OnEvent(Block(20, 1));
  r.StartStream();
  r.OnEvent(Block(5, 3));  // a new stream: no delta back to time 20
  r.OnEvent(Block(9, 3));
  ResolutionSummary s = r.Summary();
  CHECK(s.deltas == 2);
  CHECK(s.median_ns == 4);
  CHECK(s.median_insns == 1);
  TimeResolution none(1.0);
  none.OnEvent(Block(kUnknownTime, 5));
  CHECK(!none.Summary().has_deltas());
}
