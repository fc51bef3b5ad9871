#pragma once
// Decoding one PSB segment of a parallel decode: with the fast engine where it applies, handing
// the segment to libipt where the fast engine stops (RunSegment), and collecting its events for
// the stitching (DecodeCollectedSegment, what the worker threads do).
#include <functional>
#include <optional>
#include <string>
#include <span>
#include <vector>

#include "src/model/event_chunks.h"
#include "decoders/pt/fast/code_blocks.h"
#include "decoders/pt/flow_range.h"
#include "decoders/pt/segment_join.h"

namespace ptprof::pt {

struct SegmentRun {
  std::optional<Result<FlowRangeResult>> result;
  bool fast = false;     // the fast engine decoded it
  std::string fallback;  // why the fast engine handed it to libipt
};

// Decodes trace[range.begin, range.end) into `sink` (offsets in the whole trace).
// `before_finish` is DecodeFlowRange's; `handed_over` is called when the fast engine stops and
// libipt decodes the same bytes again into the same sink, from the start. `run_refs`: where the
// fast engine may pass TNT runs as references (a sink that keeps EventChunks).
SegmentRun RunSegment(std::span<const uint8_t> trace, const ImageSet& images,
                      const FlowRequest& request, const TraceSegment& range,
                      fast::CodeGraphPool& graphs, EventSink& sink,
                      const std::function<void()>& before_finish,
                      const std::function<void()>& handed_over, RunRefWindow run_refs = {});

// Where a segment's collected events may hold run references: from its third PSB (begin being
// the first) and its first thousands of blocks to its last PSB before the cut, which no join
// reads (FindJoin refuses a join that would: next's first events up to the PSB after begin and a
// few hundred more). Empty when the segment has too few PSBs.
RunRefWindow RunRefWindowOf(std::span<const uint8_t> trace, const TraceSegment& range);

struct SegmentOutcome {
  DecodedSegment decoded;
  SegmentRun run;
};

// Decodes `range` keeping every event in chunks from `pool`, TNT runs within RunRefWindowOf as
// references into `graphs`.
void DecodeCollectedSegment(std::span<const uint8_t> trace, const ImageSet& images,
                            const FlowRequest& request, const TraceSegment& range,
                            EventChunkPool& pool, fast::CodeGraphPool& graphs,
                            SegmentOutcome& out);

}  // namespace ptprof::pt
