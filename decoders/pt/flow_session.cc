#include "decoders/pt/flow_session.h"

#include <atomic>

#include "decoders/pt/fast/code_blocks.h"
#include "decoders/pt/flow_range.h"
#include "decoders/pt/parallel_flow.h"
#include "decoders/pt/parted_flow.h"
#include "src/model/decode_defaults.h"

namespace ptprof::pt {

namespace {
std::atomic<FlowEngine> default_engine{FlowEngine::kFast};
}  // namespace

void SetDefaultFlowEngine(FlowEngine engine) { default_engine = engine; }
FlowEngine DefaultFlowEngine() { return default_engine; }

Result<FlowSummary> DecodeFlowSequential(std::span<const uint8_t> trace, const ImageSet& images,
                                         const FlowRequest& request, EventSink& sink) {
  auto range = DecodeFlowRange(trace, images, request, sink, {}, 0, request.graphs);
  if (!range) return tl::unexpected(range.error());
  FlowSummary summary = std::move(range->summary);
  if (auto at = TruncatedPacketAt(trace)) {
    sink.OnEvent(TruncationGap(*at, request.cpu));
    summary.gaps += 1;
  }
  sink.OnEnd();
  summary.has_psb = range->synced || HasPsb(trace);
  return summary;
}

namespace {

// Passes events on after dropping the first `skip` of them.
class SkippingSink : public EventSink {
 public:
  SkippingSink(EventSink& next, uint64_t skip) : next_(next), skip_(skip) {}
  void OnEvent(const TraceEvent& event) override {
    if (skip_) {
      --skip_;
      return;
    }
    next_.OnEvent(event);
  }

 private:
  EventSink& next_;
  uint64_t skip_;
};

// The fast engine on one thread: its events go straight to the sink. Where it meets what it does
// not handle, libipt decodes the trace again from the start and the events the sink already has
// (the same as libipt's first ones) are skipped.
Result<FlowSummary> DecodeFlowFastSequential(std::span<const uint8_t> trace,
                                             const ImageSet& images,
                                             const FlowRequest& request, EventSink& sink) {
  auto fast = DecodeFlowRangeFast(trace, images, request, sink, {}, UINT64_MAX, request.graphs);
  if (!fast) return tl::unexpected(fast.error());
  FlowSummary summary;
  bool synced = false;
  if (fast->handled) {
    summary = std::move(fast->range.summary);
    synced = fast->range.synced;
    summary.fast_segments = 1;
  } else {
    SkippingSink rest(sink, fast->passed);
    auto range = DecodeFlowRange(trace, images, request, rest, {}, 0, request.graphs);
    if (!range) return tl::unexpected(range.error());
    summary = std::move(range->summary);
    synced = range->synced;
    summary.libipt_segments = 1;
    summary.fallback_because = "segment at 0x0: " + fast->why;
  }
  if (auto at = TruncatedPacketAt(trace)) {
    sink.OnEvent(TruncationGap(*at, request.cpu));
    summary.gaps += 1;
  }
  sink.OnEnd();
  summary.has_psb = synced || HasPsb(trace);
  return summary;
}

}  // namespace

Result<FlowSummary> DecodeFlow(std::span<const uint8_t> trace, const ImageSet& images,
                               const FlowRequest& request, EventSink& sink) {
  const bool fast = request.engine == FlowEngine::kFast && FastEngineApplies(request);
  const unsigned jobs = request.jobs ? request.jobs : DefaultDecodeJobs();
  if (fast && jobs < 2) return DecodeFlowFastSequential(trace, images, request, sink);
  // A consumer that takes its stream in parts gets one per segment, on the thread that decodes it
  // (segments of the size the consumer asks for, else PartedSegmentBytes, unless the user chose).
  // With tasks from sideband each segment's decode asks which task runs from the time at its
  // PSB on, as the decode in one piece does there (the joins check that they agree).
  auto* parted = jobs >= 2 ? dynamic_cast<PartedSink*>(&sink) : nullptr;
  if (parted && !parted->TakesParts()) parted = nullptr;
  FlowRequest parted_request = request;
  const bool sized_here = !request.segment_bytes && !ChosenSegmentBytes();
  if (parted && sized_here)
    parted_request.segment_bytes =
        parted->PartBytes() ? parted->PartBytes() : PartedSegmentBytes(trace.size(), jobs);
  // Where ptprof picks the segments' size for the decode, the last ones are shorter
  // (PlanSegments' tapering); not for parts of the consumer's own size, whose count decides below
  // whether they pay.
  const bool own_part_bytes = parted && parted->PartBytes();
  ParallelPlan plan =
      PlanParallelDecode(trace, parted ? parted_request : request, sized_here && !own_part_bytes);
  // Parts of the size the consumer asked for (the listings' small ones) pay only with a few per
  // thread (kMinPartsPerThread).
  if (sized_here && own_part_bytes && plan.segments.size() >= 2 &&
      plan.segments.size() < kMinPartsPerThread * jobs) {
    const std::string no_parts = std::to_string(plan.segments.size()) +
                                 " parts are too few for " + std::to_string(jobs) + " threads";
    parted = nullptr;
    plan = PlanParallelDecode(trace, request, sized_here);
    if (plan.segments.size() < 2) plan.sequential_because = no_parts;
  }
  if (plan.segments.size() < (fast ? 1u : 2u)) {
    auto summary = DecodeFlowSequential(trace, images, request, sink);
    if (summary) {
      summary->sequential_because = plan.sequential_because;
      std::string why;
      if (request.engine == FlowEngine::kFast && !FastEngineApplies(request, &why))
        summary->fallback_because = "the fast engine does not apply: " + why;
    }
    return summary;
  }
  if (parted && plan.segments.size() >= 2)
    return DecodeFlowInParts(trace, images, request, plan, *parted);
  return DecodeFlowParallel(trace, images, request, plan, sink);
}

}  // namespace ptprof::pt
