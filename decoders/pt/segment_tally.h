#pragma once
// SegmentTally is what the two parallel decodes (DecodeFlowParallel, DecodeFlowInParts) keep
// alike: the stream they build, the summary of their segments' decodes, and the end of the
// decode (the rest of the trace in one piece where two segments did not join, the truncated last
// packet, the counts).
#include <cstdint>
#include <span>
#include <string>

#include "decoders/pt/fast/code_blocks.h"
#include "decoders/pt/parallel_flow.h"
#include "decoders/pt/segment_decode.h"
#include "decoders/pt/stitched_stream.h"

namespace ptprof::pt {

// "0x1234": a trace offset in messages.
std::string HexOffset(uint64_t offset);

class SegmentTally {
 public:
  SegmentTally(EventSink& sink, const FlowRequest& request, const ParallelPlan& plan);

  // Segment `index` of the plan, decoded: which engine took it, why the fast engine handed it
  // over, the first segment's warnings.
  void Count(const SegmentRun& run, const TraceSegment& range, size_t index);
  // Ends the decode. `why` (empty when every segment joined): why the rest is decoded in one
  // piece from `from`, of which the stream already has (or does not take) the first `skip`
  // events.
  Result<FlowSummary> Finish(std::span<const uint8_t> trace, const ImageSet& images,
                             fast::CodeGraphPool& graphs, const std::string& why, uint64_t from,
                             size_t skip);

  StitchedStream out;     // the stream, counted, to the sink
  FlowSummary summary;    // blocks, insns and gaps: those not passed through `out`

 private:
  EventSink& sink_;
  const FlowRequest& request_;
  bool synced_ = false;
};

}  // namespace ptprof::pt
