// Instructions (--insn) with tasks followed from sideband: the fast engine lists, per task and
// address space, exactly what libipt's instruction decoder lists, also where the tasks switch in
// the middle of a PSB segment (the decode then reads another image from that instruction on).
#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "decoders/pt/flow_session.h"
#include "decoders/pt/flow_testing.h"
#include "src/model/event_equality.h"
#include "src/pipeline/session_archive.h"

using namespace ptprof;

namespace {

std::string Trace(const std::string& name) {
  const char* root = std::getenv("SOURCE_ROOT");
  return std::string(root ? root : "..") + "/traces/" + name;
}

// Two tasks that take turns every `period` ticks from `start` on (before it, and before the
// first timing packet, the first runs). Each has its own address space, both holding `images`'
// code: an instruction read from the wrong space's image (or from none) shows as a difference.
class TakingTurns : public pt::TaskTimeline {
 public:
  TakingTurns(const ImageSet& images, uint64_t start, uint64_t period)
      : images_(images), start_(start), period_(period) {}
  pt::RunningTask TaskAt(std::optional<uint64_t> tsc, pt::TscSpan*) override {
    const bool second = tsc && *tsc >= start_ && ((*tsc - start_) / period_) % 2 == 0;
    return second ? pt::RunningTask{200, 201, 1} : pt::RunningTask{100, 101, 0};
  }
  std::vector<const ImageSection*> SpaceSections(size_t) const override {
    std::vector<const ImageSection*> sections;
    for (const ImageSection& section : images_.sections()) sections.push_back(&section);
    return sections;
  }

 private:
  const ImageSet& images_;
  uint64_t start_, period_;
};

struct Decoded {
  pt::testing::CollectingSink events;
  pt::FlowSummary summary;
};

Decoded Decode(const Session& session, pt::FlowEngine engine, bool insns,
               pt::TaskTimeline* tasks) {
  static const ImageSet kNoImages;
  pt::FlowRequest request;
  request.params = session.params();
  request.engine = engine;
  request.insns = insns;
  request.tasks = tasks;
  Decoded out;
  auto summary = pt::DecodeFlow(session.stream_bytes[0], tasks ? kNoImages : session.images,
                                request, out.events);
  REQUIRE(summary);
  out.summary = *summary;
  return out;
}

}  // namespace

TEST_CASE("--insn with tasks switching inside PSB segments: the fast engine lists libipt's "
          "instructions") {
  auto session = OpenArchiveSession(Trace("lab/syscalls-function-cyc.ptar"));
  REQUIRE(session);
  REQUIRE(session->stream_bytes.size() == 1);
  // The times the blocks end at, to put the switches among them.
  const Decoded blocks = Decode(*session, pt::FlowEngine::kLibipt, false, nullptr);
  std::vector<uint64_t> times;
  for (const TraceEvent& event : blocks.events.events)
    if (std::holds_alternative<ExecBlock>(event.body) && event.header.tsc != kUnknownTime)
      times.push_back(event.header.tsc);
  REQUIRE(times.size() > 1000);
  std::sort(times.begin(), times.end());
  const uint64_t start = times[times.size() / 10];
  const uint64_t period = std::max<uint64_t>((times.back() - start) / 41, 1);

  TakingTurns fast_tasks(session->images, start, period);
  TakingTurns libipt_tasks(session->images, start, period);
  const Decoded fast = Decode(*session, pt::FlowEngine::kFast, true, &fast_tasks);
  const Decoded libipt = Decode(*session, pt::FlowEngine::kLibipt, true, &libipt_tasks);
  INFO(fast.summary.fallback_because);
  CHECK(fast.summary.libipt_segments == 0);
  CHECK(fast.summary.fast_segments > 0);
  REQUIRE(fast.events.events.size() == libipt.events.events.size());
  size_t switches = 0, insns = 0, mismatches = 0;
  for (size_t i = 0; i < fast.events.events.size(); ++i) {
    const TraceEvent& a = fast.events.events[i];
    if (!SameEvent(a, libipt.events.events[i]) && mismatches++ < 5) {
      INFO("event " << i);
      CHECK(SameEvent(a, libipt.events.events[i]));
    }
    if (std::holds_alternative<ContextSwitch>(a.body)) ++switches;
    if (std::holds_alternative<Instruction>(a.body)) ++insns;
  }
  CHECK(mismatches == 0);
  // The turns reach far into the trace, between PSBs as well as at them.
  CHECK(switches >= 20);
  CHECK(insns == fast.summary.insns);
  CHECK(insns > 100000);
}
