#include "decoders/pt/parallel_flow.h"

#include <catch2/catch.hpp>

#include "src/model/event_equality.h"
#include "decoders/pt/flow_testing.h"
#include "decoders/pt/segment_decode.h"

using namespace ptprof;
using namespace ptprof::pt;
using namespace ptprof::pt::testing;

namespace {

using Collect = CollectingSink;

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

// A 64-bit program at 0x1000 of six conditional branches in a row, then a syscall:
//   1000 je 1004; 1002 nop; 1003 nop; 1004 je 1008; ...; 1014 je 1018; 1018 syscall
std::vector<uint8_t> BranchyProgram() {
  std::vector<uint8_t> code(0x20, 0x90);
  for (size_t at = 0; at < 0x18; at += 4) {
    code[at] = 0x74;  // je +2
    code[at + 1] = 0x02;
  }
  code[0x18] = 0x0f;
  code[0x19] = 0x05;
  return code;
}

// `rounds` runs of it, each from its own PSB: the branches taken and not by turns, tracing
// disabled at the syscall.
std::vector<uint8_t> BranchyTrace(int rounds) {
  PacketWriter w;
  for (int i = 0; i < rounds; ++i) {
    w.Psb().Tsc(0x1000 + 0x100 * static_cast<uint64_t>(i)).ModeExec(ptem_64bit).PsbEnd();
    w.TipPge(kSampleBase);
    w.Tnt(i % 2 ? 0b101010 : 0b011001, 6);
    w.TipPgdSuppressed();
  }
  return w.bytes();
}

// BranchyTrace(5000) and the images it runs in.
struct BranchyRecording {
  BranchyRecording() {
    REQUIRE(images.AddRaw(RawImageSpec{code.path(), 0, UINT64_MAX, kSampleBase}));
  }
  TempFile code{BranchyProgram()};
  ImageSet images;
  std::vector<uint8_t> trace = BranchyTrace(5000);
};

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

    // Every thread count, both engines, segments short and long.
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

TEST_CASE("The parallel decode with run references equals the sequential one",
          "[parallel_flow]") {
  // Segments long enough for the workers to keep TNT runs as references between their PSBs.
  const BranchyRecording recording;
  const ImageSet& images = recording.images;
  const std::vector<uint8_t>& trace = recording.trace;
  FlowRequest sequential;
  sequential.jobs = 1;
  Collect expected;
  REQUIRE(DecodeFlow(trace, images, sequential, expected));
  for (unsigned jobs : {2u, 3u}) {
    INFO(jobs << " jobs");
    FlowRequest parallel;
    parallel.jobs = jobs;
    parallel.segment_bytes = 40000;
    Collect got;
    auto summary = DecodeFlow(trace, images, parallel, got);
    REQUIRE(summary);
    CHECK(summary->segments >= 4);
    INFO(summary->sequential_because);
    CHECK(summary->sequential_because.empty());
    RequireSameStreams(expected, got);
  }
}

TEST_CASE("A segment collected with run references passes on the blocks of one without",
          "[parallel_flow]") {
  const BranchyRecording recording;
  const ImageSet& images = recording.images;
  const std::vector<uint8_t>& trace = recording.trace;
  const std::vector<TraceSegment> segments =
      PlanSegments(FindPsbOffsets(trace), trace.size(), 40000);
  REQUIRE(segments.size() >= 3);
  const TraceSegment& range = segments[1];
  const RunRefWindow window = RunRefWindowOf(trace, range);
  REQUIRE(window.from >= range.begin);
  REQUIRE(window.until <= range.cut);
  REQUIRE(window.from < window.until);

  class Keep : public EventSink {
   public:
    explicit Keep(EventChunks& events) : events_(events) {}
    void OnEvent(const TraceEvent& event) override { events_.push_back(event); }
    void OnBlocks(const BlockBatch& batch) override { events_.Append(batch); }

   private:
    EventChunks& events_;
  };
  FlowRequest request;
  fast::CodeGraphPool graphs;
  EventChunkPool pool;
  EventChunks plain(&pool), referred(&pool);
  Keep keep_plain(plain), keep_referred(referred);
  const SegmentRun a = RunSegment(trace, images, request, range, graphs, keep_plain, {}, {});
  const SegmentRun b =
      RunSegment(trace, images, request, range, graphs, keep_referred, {}, {}, window);
  REQUIRE(a.fast);
  REQUIRE(b.fast);
  CHECK(plain.refs_begin() == plain.refs_end());
  REQUIRE(referred.refs_begin() < referred.refs_end());
  CHECK(referred.size() < plain.size());
  // Nothing before the window's first PSB or from its last on is a reference.
  CHECK(referred.OffsetAt(referred.refs_begin()) >= window.from);
  CHECK(referred.OffsetAt(referred.refs_end() - 1) < window.until);

  Collect from_plain, from_referred;
  plain.PassOn(0, plain.size(), from_plain);
  referred.PassOn(0, referred.size(), from_referred);
  from_plain.OnEnd();
  from_referred.OnEnd();
  RequireSameStreams(from_plain, from_referred);
}
