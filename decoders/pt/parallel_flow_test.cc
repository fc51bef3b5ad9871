#include "decoders/pt/parallel_flow.h"

#include <catch2/catch.hpp>

#include "src/model/event_equality.h"
#include "decoders/pt/flow_testing.h"

using namespace ptprof;
using namespace ptprof::pt;
using namespace ptprof::pt::testing;

namespace {

class Collect : public EventSink {
 public:
  void OnEvent(const TraceEvent& event) override { events.push_back(event); }
  void OnEnd() override { ++ends; }
  std::vector<TraceEvent> events;
  int ends = 0;
};

// `rounds` runs of the sample program, each from its own PSB, with `junk` between some of them.
std::vector<uint8_t> LongTrace(int rounds, bool junk) {
  std::vector<uint8_t> trace;
  for (int i = 0; i < rounds; ++i) {
    auto part = SampleTrace(0x1000 + 0x100 * static_cast<uint64_t>(i));
    trace.insert(trace.end(), part.begin(), part.end());
    if (junk && i % 7 == 3) trace.insert(trace.end(), {0xd9, 0x01, 0x77});
  }
  return trace;
}

void RequireSameStreams(const Collect& a, const Collect& b) {
  REQUIRE(a.events.size() == b.events.size());
  for (size_t i = 0; i < a.events.size(); ++i) {
    INFO("event " << i);
    CHECK(SameEvent(a.events[i], b.events[i]));
  }
  CHECK(a.ends == 1);
  CHECK(b.ends == 1);
}

}  // namespace

TEST_CASE("The parallel decode equals the sequential one", "[parallel_flow]") {
  TempFile code(SampleProgram());
  ImageSet images;
  REQUIRE(images.AddRaw(RawImageSpec{code.path(), 0, UINT64_MAX, kSampleBase}));
  for (bool junk : {false, true}) {
    INFO("junk " << junk);
    const auto trace = LongTrace(40, junk);
    FlowRequest sequential;
    sequential.jobs = 1;
    Collect expected;
    auto one = DecodeFlow(trace, images, sequential, expected);
    REQUIRE(one);
    CHECK(one->segments == 1);

    // Every thread count (the stitching thread streams every jobs-th segment itself), both
    // engines, segments short and long.
    for (FlowEngine engine : {FlowEngine::kFast, FlowEngine::kLibipt})
      for (unsigned jobs : {2u, 3u, 4u})
        for (uint64_t bytes : {100u, 300u}) {
          INFO("engine " << (engine == FlowEngine::kFast ? "fast" : "libipt") << ", " << jobs
                         << " jobs, segments of " << bytes);
          FlowRequest parallel;
          parallel.engine = engine;
          parallel.jobs = jobs;
          parallel.segment_bytes = bytes;
          Collect got;
          auto two = DecodeFlow(trace, images, parallel, got);
          REQUIRE(two);
          CHECK(two->segments >= 4);
          CHECK(two->sequential_because.empty());
          RequireSameStreams(expected, got);
          CHECK(two->blocks == one->blocks);
          CHECK(two->insns == one->insns);
          CHECK(two->gaps == one->gaps);
          CHECK(two->has_psb);
        }
  }
}

TEST_CASE("The parallel decode of a trace cut short equals the sequential one", "[parallel_flow]") {
  TempFile code(SampleProgram());
  ImageSet images;
  REQUIRE(images.AddRaw(RawImageSpec{code.path(), 0, UINT64_MAX, kSampleBase}));
  auto trace = LongTrace(30, false);
  trace.resize(trace.size() - 3);  // in the middle of the last packets
  FlowRequest sequential;
  sequential.jobs = 1;
  Collect expected;
  auto one = DecodeFlow(trace, images, sequential, expected);
  REQUIRE(one);
  FlowRequest parallel;
  parallel.jobs = 3;
  parallel.segment_bytes = 64;
  Collect got;
  auto many = DecodeFlow(trace, images, parallel, got);
  REQUIRE(many);
  RequireSameStreams(expected, got);
  CHECK(many->gaps == one->gaps);
}

TEST_CASE("A decode too small to cut says why it stayed sequential", "[parallel_flow]") {
  TempFile code(SampleProgram());
  ImageSet images;
  REQUIRE(images.AddRaw(RawImageSpec{code.path(), 0, UINT64_MAX, kSampleBase}));
  FlowRequest request;
  request.jobs = 2;
  request.segment_bytes = 1 << 20;
  Collect got;
  auto summary = DecodeFlow(SampleTrace(), images, request, got);
  REQUIRE(summary);
  CHECK(summary->segments == 1);
  CHECK(summary->sequential_because == "the trace is smaller than two segments");
}
