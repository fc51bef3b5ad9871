#include "decoders/pt/fast/fast_flow.h"

#include <catch2/catch.hpp>

#include "src/model/event_equality.h"
#include "decoders/pt/flow_session.h"
#include "decoders/pt/flow_testing.h"

using namespace ptprof;
using namespace ptprof::pt;
using namespace ptprof::pt::testing;

namespace {

class Collect : public EventSink {
 public:
  void OnEvent(const TraceEvent& event) override { events.push_back(event); }
  std::vector<TraceEvent> events;
};

struct Decoded {
  Collect events;
  FlowSummary summary;
};

Decoded Decode(const std::vector<uint8_t>& trace, const ImageSet& images, FlowEngine engine,
               unsigned jobs = 1, uint64_t segment = 0) {
  FlowRequest request;
  request.engine = engine;
  request.jobs = jobs;
  request.segment_bytes = segment;
  Decoded out;
  auto summary = DecodeFlow(trace, images, request, out.events);
  REQUIRE(summary);
  out.summary = *summary;
  return out;
}

void RequireSame(const Decoded& a, const Decoded& b) {
  REQUIRE(a.events.events.size() == b.events.events.size());
  for (size_t i = 0; i < a.events.events.size(); ++i) {
    INFO("event " << i);
    CHECK(SameEvent(a.events.events[i], b.events.events[i]));
  }
  CHECK(a.summary.blocks == b.summary.blocks);
  CHECK(a.summary.insns == b.summary.insns);
  CHECK(a.summary.gaps == b.summary.gaps);
}

}  // namespace

TEST_CASE("The fast engine gives libipt's events on the sample program", "[fast_flow]") {
  TempFile code(SampleProgram());
  ImageSet images;
  REQUIRE(images.AddRaw(RawImageSpec{code.path(), 0, UINT64_MAX, kSampleBase}));
  const auto trace = SampleTrace();
  const Decoded libipt = Decode(trace, images, FlowEngine::kLibipt);
  const Decoded fast = Decode(trace, images, FlowEngine::kFast);
  RequireSame(libipt, fast);
  INFO(fast.summary.fallback_because);
  CHECK(fast.summary.fast_segments == 1);
  CHECK(fast.summary.libipt_segments == 0);
  CHECK(fast.summary.fallback_because.empty());
  CHECK(fast.summary.insns > 3);
}

TEST_CASE("The fast engine over many segments, with junk between runs", "[fast_flow]") {
  TempFile code(SampleProgram());
  ImageSet images;
  REQUIRE(images.AddRaw(RawImageSpec{code.path(), 0, UINT64_MAX, kSampleBase}));
  std::vector<uint8_t> trace;
  for (int i = 0; i < 30; ++i) {
    auto part = SampleTrace(0x1000 + 0x100 * static_cast<uint64_t>(i));
    trace.insert(trace.end(), part.begin(), part.end());
  }
  const Decoded libipt = Decode(trace, images, FlowEngine::kLibipt);
  for (unsigned jobs : {1u, 2u}) {
    INFO("jobs " << jobs);
    const Decoded fast = Decode(trace, images, FlowEngine::kFast, jobs, 100);
    RequireSame(libipt, fast);
    // One thread decodes in one piece; more cut the trace into PSB segments.
    CHECK(fast.summary.segments == (jobs == 1 ? 1u : fast.summary.segments));
    if (jobs > 1) CHECK(fast.summary.segments > 4);
    CHECK(fast.summary.fast_segments == fast.summary.segments);
    CHECK(fast.summary.libipt_segments == 0);
  }
}

TEST_CASE("What the fast engine does not handle goes to libipt, and the output stays the same",
          "[fast_flow]") {
  TempFile code(SampleProgram());
  ImageSet images;
  REQUIRE(images.AddRaw(RawImageSpec{code.path(), 0, UINT64_MAX, kSampleBase}));
  // A decode error: tracing enabled where no code is mapped.
  PacketWriter bad;
  bad.Psb().Tsc(0x10).ModeExec(ptem_64bit).PsbEnd().TipPge(0x9000).Tnt(1, 1).TipPgdSuppressed();
  const Decoded libipt = Decode(bad.bytes(), images, FlowEngine::kLibipt);
  for (unsigned jobs : {1u, 2u}) {
    INFO("jobs " << jobs);
    const Decoded fast = Decode(bad.bytes(), images, FlowEngine::kFast, jobs);
    RequireSame(libipt, fast);
    CHECK(fast.summary.fast_segments == 0);
    CHECK(fast.summary.libipt_segments == 1);
    CHECK(fast.summary.fallback_because.find("no code mapped at 0x9000") != std::string::npos);
  }
  CHECK(libipt.summary.gaps > 0);
}

TEST_CASE("Handing over to libipt in the middle of a one-piece decode keeps the events before",
          "[fast_flow]") {
  TempFile code(SampleProgram());
  ImageSet images;
  REQUIRE(images.AddRaw(RawImageSpec{code.path(), 0, UINT64_MAX, kSampleBase}));
  // Good runs, then one that enables where no code is mapped, then good runs again.
  std::vector<uint8_t> trace;
  for (int i = 0; i < 6; ++i) {
    if (i == 3) {
      PacketWriter bad;
      bad.Psb()
          .Tsc(0x5000)
          .ModeExec(ptem_64bit)
          .PsbEnd()
          .TipPge(0x9000)
          .Tnt(1, 1)
          .TipPgdSuppressed();
      trace.insert(trace.end(), bad.bytes().begin(), bad.bytes().end());
    }
    auto part = SampleTrace(0x1000 + 0x100 * static_cast<uint64_t>(i));
    trace.insert(trace.end(), part.begin(), part.end());
  }
  const Decoded libipt = Decode(trace, images, FlowEngine::kLibipt);
  const Decoded fast = Decode(trace, images, FlowEngine::kFast);
  RequireSame(libipt, fast);
  CHECK(fast.summary.libipt_segments == 1);
  CHECK(libipt.summary.gaps > 0);
}

namespace {

// Two tasks, each in its own address space holding the sample program: the first until TSC
// 0x1800, the second after.
class TwoTasks : public TaskTimeline {
 public:
  TwoTasks(const ImageSet& first, const ImageSet& second) : spaces_{&first, &second} {}
  RunningTask TaskAt(std::optional<uint64_t> tsc) override {
    if (!tsc || *tsc < 0x1800) return RunningTask{10, 11, 0};
    return RunningTask{20, 21, 1};
  }
  std::vector<const ImageSection*> SpaceSections(size_t space) const override {
    std::vector<const ImageSection*> sections;
    for (const ImageSection& section : spaces_[space]->sections()) sections.push_back(&section);
    return sections;
  }

 private:
  const ImageSet* spaces_[2];
};

}  // namespace

TEST_CASE("The fast engine follows tasks from sideband as libipt's decode does", "[fast_flow]") {
  TempFile code(SampleProgram());
  TempFile other(SampleProgram());
  ImageSet first, second;
  REQUIRE(first.AddRaw(RawImageSpec{code.path(), 0, UINT64_MAX, kSampleBase}));
  REQUIRE(second.AddRaw(RawImageSpec{other.path(), 0, UINT64_MAX, kSampleBase}));
  std::vector<uint8_t> trace;
  for (uint64_t tsc : {0x1000, 0x1400, 0x2000, 0x2400}) {
    auto part = SampleTrace(tsc);
    trace.insert(trace.end(), part.begin(), part.end());
  }
  auto decode = [&](FlowEngine engine) {
    TwoTasks tasks(first, second);
    FlowRequest request;
    request.engine = engine;
    request.tasks = &tasks;
    request.jobs = 2;  // tasks keep the decode in one piece anyway
    Decoded out;
    auto summary = DecodeFlow(trace, first, request, out.events);
    REQUIRE(summary);
    out.summary = *summary;
    return out;
  };
  const Decoded libipt = decode(FlowEngine::kLibipt);
  const Decoded fast = decode(FlowEngine::kFast);
  RequireSame(libipt, fast);
  CHECK(fast.summary.fast_segments == 1);
  CHECK(fast.summary.sequential_because == "the tasks from sideband are followed in trace order");
  size_t switches = 0;
  for (const TraceEvent& event : fast.events.events)
    if (std::holds_alternative<ContextSwitch>(event.body)) ++switches;
  CHECK(switches == 2);  // to the first task at the start, to the second at TSC 0x2000
  CHECK(fast.events.events.back().header.pid == 20);
}

TEST_CASE("The fast engine does not take instruction decodes", "[fast_flow]") {
  FlowRequest request;
  request.insns = true;
  std::string why;
  CHECK_FALSE(FastEngineApplies(request, &why));
  CHECK(why == "instructions are asked for (--insn)");
  CHECK(FastEngineApplies(FlowRequest{}));
}
