#include "decoders/pt/flow_session.h"

#include <atomic>

#include "decoders/pt/flow_range.h"
#include "decoders/pt/parallel_flow.h"

namespace ptprof::pt {

namespace {
std::atomic<FlowEngine> default_engine{FlowEngine::kLibipt};
}  // namespace

void SetDefaultFlowEngine(FlowEngine engine) { default_engine = engine; }
FlowEngine DefaultFlowEngine() { return default_engine; }

Result<FlowSummary> DecodeFlowSequential(const std::vector<uint8_t>& trace, const ImageSet& images,
                                         const FlowRequest& request, EventSink& sink) {
  auto range = DecodeFlowRange(trace, images, request, sink, {});
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

Result<FlowSummary> DecodeFlow(const std::vector<uint8_t>& trace, const ImageSet& images,
                               const FlowRequest& request, EventSink& sink) {
  const ParallelPlan plan = PlanParallelDecode(trace, request);
  const bool fast = request.engine == FlowEngine::kFast && FastEngineApplies(request);
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
  return DecodeFlowParallel(trace, images, request, plan, sink);
}

}  // namespace ptprof::pt
