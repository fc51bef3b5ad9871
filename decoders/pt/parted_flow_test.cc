#include "decoders/pt/parted_flow.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include <catch2/catch.hpp>

#include "decoders/pt/flow_testing.h"
#include "src/model/event_equality.h"
#include "src/model/parted_sink.h"
#include "decoders/pt/psb_segments.h"

using namespace ptprof;
using namespace ptprof::pt;
using namespace ptprof::pt::testing;

namespace {

using Collect = CollectingSink;

// Collects the stream in parts: the events it gets directly and its folded parts' events, in
// the order they come, and what it saw of the parts.
class CollectInParts : public PartedSink {
 public:
  void OnEvent(const TraceEvent& event) override { events.push_back(event); }
  void OnEnd() override { ++ends; }
  std::unique_ptr<EventSink> NewPart() const override {
    made += 1;
    return std::make_unique<Part>();
  }
  void Fold(std::unique_ptr<EventSink> part) override {
    auto& taken = static_cast<Part&>(*part);
    folded += 1;
    folded_events += taken.events.size();
    parts_ended += static_cast<size_t>(taken.ends);
    threads.insert(taken.thread);
    events.insert(events.end(), taken.events.begin(), taken.events.end());
  }

  std::vector<TraceEvent> events;
  int ends = 0;
  mutable std::atomic<size_t> made{0};
  size_t folded = 0, folded_events = 0;
  size_t parts_ended = 0;
  std::set<std::thread::id> threads;

 private:
  struct Part : Collect {
    void OnEvent(const TraceEvent& event) override {
      thread = std::this_thread::get_id();
      Collect::OnEvent(event);
    }
    std::thread::id thread;
  };
};

void RequireSameEvents(const std::vector<TraceEvent>& a, const std::vector<TraceEvent>& b) {
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    INFO("event " << i);
    REQUIRE(SameEvent(a[i], b[i]));
  }
}

// `rounds` runs of the sample program, each from its own PSB.
std::vector<uint8_t> Rounds(int rounds) {
  std::vector<uint8_t> trace;
  for (int i = 0; i < rounds; ++i) {
    auto part = SampleTrace(0x1000 + 0x100 * static_cast<uint64_t>(i));
    trace.insert(trace.end(), part.begin(), part.end());
  }
  return trace;
}

// Rounds of the sample program with a PSB between its call and its compressed return, then more
// runs of it before the next round's PSB. A decode that starts at that PSB has no return address
// for the return: it reports a gap and finds its way again only at the next PSB, so it lacks the
// runs the decode that saw the call has before that PSB, and the two do not join. (No processor
// writes this: returns are compressed only for calls since the last PSB.)
std::vector<uint8_t> RoundsWithPsbInCall(int rounds) {
  PacketWriter w;
  for (int i = 0; i < rounds; ++i) {
    const uint64_t tsc = 0x1000 + 0x100 * static_cast<uint64_t>(i);
    w.Psb().Tsc(tsc).ModeExec(ptem_64bit).PsbEnd();
    w.TipPge(kSampleBase);
    w.Tnt(0b1, 1);  // je taken, then the call
    w.Psb().Tsc(tsc + 0x80).ModeExec(ptem_64bit).Fup(kSampleBase + 0x10).PsbEnd();
    w.Tnt(0b1, 1);  // the return, compressed
    w.TipPgdSuppressed();
    for (int run = 0; run < 3; ++run) {
      w.TipPge(kSampleBase);
      w.Tnt(0b11, 2);  // je taken, the return
      w.TipPgdSuppressed();
    }
  }
  return w.bytes();
}

// The sample program's code, loaded where the sample traces run it.
struct SampleImages {
  SampleImages() { REQUIRE(images.AddRaw(RawImageSpec{code.path(), 0, UINT64_MAX, kSampleBase})); }
  TempFile code{SampleProgram()};
  ImageSet images;
};

struct Decoded {
  Result<FlowSummary> summary;
  std::vector<TraceEvent> events;
};

Decoded Sequential(const std::vector<uint8_t>& trace, const ImageSet& images) {
  FlowRequest request;
  request.jobs = 1;
  Collect collect;
  auto summary = DecodeFlow(trace, images, request, collect);
  return Decoded{std::move(summary), std::move(collect.events)};
}

}  // namespace

TEST_CASE("A decode in parts gives the consumer the events of the sequential decode",
          "[parted_flow]") {
  SampleImages sample;
  const ImageSet& images = sample.images;
  // Short segments, whose heads reach their cuts (all their events wait for the join), and long
  // ones, whose middles go to their parts.
  const auto trace = Rounds(3000);
  const Decoded expected = Sequential(trace, images);
  REQUIRE(expected.summary);
  for (FlowEngine engine : {FlowEngine::kFast, FlowEngine::kLibipt})
    for (unsigned jobs : {2u, 3u})
      for (uint64_t bytes : {300u, 20000u}) {
        INFO((engine == FlowEngine::kFast ? "fast" : "libipt") << ", " << jobs
                                                                << " jobs, segments of " << bytes);
        FlowRequest request;
        request.engine = engine;
        request.jobs = jobs;
        request.segment_bytes = bytes;
        CollectInParts got;
        auto summary = DecodeFlow(trace, images, request, got);
        REQUIRE(summary);
        CHECK(summary->segments >= 4);
        CHECK(summary->sequential_because.empty());
        RequireSameEvents(expected.events, got.events);
        CHECK(got.ends == 1);
        CHECK(got.parts_ended == got.folded);
        CHECK(got.made == summary->segments);
        CHECK(got.folded <= summary->segments);
        if (bytes == 20000) CHECK(got.folded_events > got.events.size() / 2);
        CHECK(summary->blocks == expected.summary->blocks);
        CHECK(summary->insns == expected.summary->insns);
        CHECK(summary->gaps == expected.summary->gaps);
        CHECK(summary->has_psb);
      }
}

TEST_CASE("A decode in parts of a trace cut short ends with the same gap", "[parted_flow]") {
  SampleImages sample;
  const ImageSet& images = sample.images;
  auto trace = Rounds(2000);
  trace.resize(trace.size() - 3);
  const Decoded expected = Sequential(trace, images);
  REQUIRE(expected.summary);
  FlowRequest request;
  request.jobs = 2;
  request.segment_bytes = 10000;
  CollectInParts got;
  auto summary = DecodeFlow(trace, images, request, got);
  REQUIRE(summary);
  RequireSameEvents(expected.events, got.events);
  CHECK(summary->gaps == expected.summary->gaps);
  CHECK(summary->insns == expected.summary->insns);
}

TEST_CASE("Segments that do not join are decoded on in one piece after what was folded",
          "[parted_flow]") {
  SampleImages sample;
  const ImageSet& images = sample.images;
  const auto trace = RoundsWithPsbInCall(2000);
  const Decoded expected = Sequential(trace, images);
  REQUIRE(expected.summary);
  // Some segment sizes cut at such a PSB, the others only at the rounds' first PSBs.
  for (FlowEngine engine : {FlowEngine::kFast, FlowEngine::kLibipt}) {
    int fell_back = 0;
    for (uint64_t bytes = 3000; bytes < 3100; bytes += 7) {
      INFO((engine == FlowEngine::kFast ? "fast" : "libipt") << ", segments of " << bytes);
      FlowRequest request;
      request.engine = engine;
      request.jobs = 2;
      request.segment_bytes = bytes;
      CollectInParts got;
      auto summary = DecodeFlow(trace, images, request, got);
      REQUIRE(summary);
      if (!summary->sequential_because.empty()) {
        CHECK_THAT(summary->sequential_because, Catch::Matchers::Contains("do not agree"));
        fell_back += 1;
      }
      RequireSameEvents(expected.events, got.events);
      CHECK(summary->blocks == expected.summary->blocks);
      CHECK(summary->insns == expected.summary->insns);
      CHECK(summary->gaps == expected.summary->gaps);
    }
    CHECK(fell_back > 0);
  }
}

// CollectInParts that refuses every part it made third, and says which part was the first.
class RefuseSome : public CollectInParts {
 public:
  std::unique_ptr<EventSink> NewFirstPart() const override {
    auto part = NewPart();
    first_made += 1;
    first_ = part.get();
    return part;
  }
  std::string Refusal(const EventSink& part) const override {
    asked += 1;
    if (!folded && !direct_events) first_folded = &part == first_;
    return asked % 3 != 0 ? "" : "every third is refused";
  }
  void OnEvent(const TraceEvent& event) override {
    direct_events += 1;
    CollectInParts::OnEvent(event);
  }
  mutable size_t asked = 0, first_made = 0;
  mutable bool first_folded = false;
  size_t direct_events = 0;

 private:
  mutable const EventSink* first_ = nullptr;
};

TEST_CASE("A part the consumer cannot fold is decoded again into it directly", "[parted_flow]") {
  SampleImages sample;
  const ImageSet& images = sample.images;
  const auto trace = Rounds(3000);
  const Decoded expected = Sequential(trace, images);
  REQUIRE(expected.summary);
  for (FlowEngine engine : {FlowEngine::kFast, FlowEngine::kLibipt}) {
    INFO((engine == FlowEngine::kFast ? "fast" : "libipt"));
    FlowRequest request;
    request.engine = engine;
    request.jobs = 2;
    request.segment_bytes = 20000;
    RefuseSome got;
    auto summary = DecodeFlow(trace, images, request, got);
    REQUIRE(summary);
    RequireSameEvents(expected.events, got.events);
    CHECK(got.first_made == 1);
    CHECK(got.first_folded);
    CHECK(summary->parts_redone == got.asked / 3);
    CHECK(summary->redone_because == "every third is refused");
    CHECK(summary->parts_redone > 0);
    CHECK(got.folded == got.asked - summary->parts_redone);
    CHECK(summary->blocks == expected.summary->blocks);
    CHECK(summary->insns == expected.summary->insns);
  }
}

TEST_CASE("A consumer's own part size gives parts only with two segments or more per thread",
          "[parted_flow]") {
  SampleImages sample;
  const auto trace = Rounds(3000);
  const Decoded expected = Sequential(trace, sample.images);
  REQUIRE(expected.summary);
  struct AskingFor : CollectInParts {
    uint64_t bytes = 0;
    uint64_t PartBytes() const override { return bytes; }
  };
  const uint64_t third = trace.size() / 3 + 1;
  for (FlowEngine engine : {FlowEngine::kFast, FlowEngine::kLibipt}) {
    INFO((engine == FlowEngine::kFast ? "fast" : "libipt"));
    FlowRequest request;
    request.engine = engine;
    request.jobs = 2;
    AskingFor few;
    few.bytes = third;  // three segments for two threads: one piece
    auto summary = DecodeFlow(trace, sample.images, request, few);
    REQUIRE(summary);
    CHECK(summary->sequential_because == "3 parts are too few for 2 threads");
    CHECK(few.made == 0);
    RequireSameEvents(expected.events, few.events);
    AskingFor enough;
    enough.bytes = trace.size() / 8;
    summary = DecodeFlow(trace, sample.images, request, enough);
    REQUIRE(summary);
    CHECK(summary->sequential_because.empty());
    CHECK(enough.made >= 4);
    RequireSameEvents(expected.events, enough.events);
    // Segments the user chose are taken in parts however few.
    request.segment_bytes = third;
    AskingFor chosen;
    chosen.bytes = third;
    summary = DecodeFlow(trace, sample.images, request, chosen);
    REQUIRE(summary);
    CHECK(chosen.made == 3);
    RequireSameEvents(expected.events, chosen.events);
  }
}

TEST_CASE("PartedSegmentBytes gives each thread about four segments, from 256 KiB to 1 MiB, and "
          "on a long trace eight, up to 4 MiB",
          "[parted_flow]") {
  CHECK(PartedSegmentBytes(1 << 20, 2) == 256u << 10);
  CHECK(PartedSegmentBytes(6u << 20, 2) == 768u << 10);
  CHECK(PartedSegmentBytes(12u << 20, 2) == 1u << 20);  // a compiler's trace: 12 segments
  CHECK(PartedSegmentBytes(16u << 20, 2) == 1u << 20);  // where eight a thread reach 1 MiB
  CHECK(PartedSegmentBytes(48u << 20, 2) == 3u << 20);
  CHECK(PartedSegmentBytes(24u << 20, 0) == 3u << 20);  // no thread count: one thread
  CHECK(PartedSegmentBytes(100u << 20, 2) == 4u << 20);
  CHECK(PartedSegmentBytes(uint64_t{8} << 30, 2) == 4u << 20);
}
