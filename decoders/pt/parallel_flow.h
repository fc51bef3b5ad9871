#pragma once
// DecodeFlowParallel answers DecodeFlow's question on several threads: it cuts the trace at PSBs
// (PlanSegments) and stitches the segments' event streams where the overlapping decodes agree
// (FindJoin), so that the sink sees exactly the events of the sequential decode. The calling
// thread decodes every jobs-th segment itself, straight into the stream (StreamedSegment), while
// jobs - 1 workers decode the others into memory (SegmentWorkers); it passes their events on
// between its own. Where two segments do not agree (e.g. cycle-accurate timing whose calibration a
// fresh decoder lacks) it decodes the rest sequentially and says why in the summary. Memory: the
// events of at most two segments per worker, whatever the trace's length.
#include <cstdint>
#include <string>
#include <span>
#include <vector>

#include "decoders/pt/flow_session.h"
#include "decoders/pt/psb_segments.h"
#include "src/model/decode_defaults.h"

namespace ptprof::pt {

struct ParallelPlan {
  unsigned jobs = 1;
  std::vector<TraceSegment> segments;  // fewer than 2: decode sequentially
  std::string sequential_because;      // why, when more than one job was asked for
};

// `taper`: the segments' size is ptprof's choice, not the user's, so that on several threads the
// last ones may be shorter (PlanSegments' taper_jobs).
ParallelPlan PlanParallelDecode(std::span<const uint8_t> trace, const FlowRequest& request,
                                bool taper = false);

// Decodes `trace` along `plan` (two segments or more), as DecodeFlow does.
Result<FlowSummary> DecodeFlowParallel(std::span<const uint8_t> trace, const ImageSet& images,
                                       const FlowRequest& request, const ParallelPlan& plan,
                                       EventSink& sink);

// DecodeFlow without the parallel path.
Result<FlowSummary> DecodeFlowSequential(std::span<const uint8_t> trace, const ImageSet& images,
                                         const FlowRequest& request, EventSink& sink);

}  // namespace ptprof::pt
