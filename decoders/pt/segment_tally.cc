#include "decoders/pt/segment_tally.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include "decoders/pt/flow_range.h"

namespace ptprof::pt {

std::string HexOffset(uint64_t offset) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%" PRIx64, offset);
  return text;
}

SegmentTally::SegmentTally(EventSink& sink, const FlowRequest& request, const ParallelPlan& plan)
    : out(sink), sink_(sink), request_(request) {
  summary.segments = plan.segments.size();
  summary.sequential_because = plan.sequential_because;
}

void SegmentTally::Count(const SegmentRun& run, const TraceSegment& range, size_t index) {
  synced_ = synced_ || (*run.result)->synced;
  if (index == 0) summary.warnings = (*run.result)->summary.warnings;
  if (request_.engine != FlowEngine::kFast) return;
  (run.fast ? summary.fast_segments : summary.libipt_segments) += 1;
  if (!run.fast && summary.fallback_because.empty())
    summary.fallback_because = "segment at " + HexOffset(range.begin) + ": " + run.fallback;
}

Result<FlowSummary> SegmentTally::Finish(std::span<const uint8_t> trace, const ImageSet& images,
                                         fast::CodeGraphPool& graphs, const std::string& why,
                                         uint64_t from, size_t skip) {
  if (!why.empty()) {
    summary.sequential_because = why;
    out.Restart(skip);
    const std::span<const uint8_t> rest = trace.subspan(from);
    // On the engine the segments were decoded on: the fast engine, and where it stops, libipt
    // from `from` again, whose first events are those the stream already has or drops.
    bool done = false;
    if (request_.engine == FlowEngine::kFast && FastEngineApplies(request_)) {
      auto fast = DecodeFlowRangeFast(rest, images, request_, out, {}, UINT64_MAX, &graphs, from);
      if (!fast) return tl::unexpected(fast.error());
      if (fast->handled) {
        synced_ = synced_ || fast->range.synced;
        done = true;
      } else {
        out.Restart(std::max<uint64_t>(skip, fast->passed));
        if (summary.fallback_because.empty())
          summary.fallback_because = "the rest from " + HexOffset(from) + ": " + fast->why;
      }
    }
    if (!done) {
      auto range = DecodeFlowRange(rest, images, request_, out, {}, from, &graphs);
      if (!range) return tl::unexpected(range.error());
      synced_ = synced_ || range->synced;
    }
  }
  if (auto at = TruncatedPacketAt(trace)) out.Pass(TruncationGap(*at, request_.cpu));
  sink_.OnEnd();
  summary.blocks += out.blocks;
  summary.insns += out.insns;
  summary.gaps += out.gaps;
  summary.has_psb = synced_ || HasPsb(trace);
  return summary;
}

}  // namespace ptprof::pt
