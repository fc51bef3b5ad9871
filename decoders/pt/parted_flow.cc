#include "decoders/pt/parted_flow.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "decoders/pt/fast/code_blocks.h"
#include "decoders/pt/flow_range.h"
#include "decoders/pt/part_queue.h"
#include "decoders/pt/part_segment.h"
#include "decoders/pt/segment_decode.h"
#include "decoders/pt/segment_join.h"
#include "decoders/pt/segment_tally.h"
#include "decoders/pt/stitched_stream.h"

namespace ptprof::pt {

namespace {

// One segment, decoded: the consumer's part, its head and tail.
struct DecodedPart {
  std::unique_ptr<EventSink> part;
  std::unique_ptr<PartSegment> segment;
  SegmentRun run;
};

// What the segment's decode passed to its part, counted as FlowSummary counts: every event of
// the decode (the decoder's own counts, kept as it made them) less those of the head and tail.
// Counting the part's blocks as they went by would read every block once more.
void CountPart(const DecodedPart& decoded, FlowSummary& summary) {
  const FlowSummary& all = (*decoded.run.result)->summary;
  struct Discard : EventSink {
    void OnEvent(const TraceEvent&) override {}
    void OnBlocks(const BlockBatch&) override {}
  } discard;
  StitchedStream kept(discard);
  PartSegment& segment = *decoded.segment;
  kept.PassRange(segment.head().events, 0, segment.head().events.size());
  kept.PassRange(segment.tail().events, 0, segment.tail().events.size());
  summary.blocks += all.blocks - kept.blocks;
  summary.insns += all.insns - kept.insns;
  summary.gaps += all.gaps - kept.gaps;
}

// Decodes segment `index` of `plan`: its events go to `part` as they come, but for its head and
// tail, which the returned segment keeps for the joins.
std::unique_ptr<PartSegment> DecodeSegmentTo(std::span<const uint8_t> trace,
                                             const ImageSet& images, const FlowRequest& request,
                                             const ParallelPlan& plan, size_t index,
                                             EventSink& part, EventChunkPool& pool,
                                             fast::CodeGraphPool& graphs, SegmentRun& run) {
  const TraceSegment& range = plan.segments[index];
  const uint64_t head_until = index ? plan.segments[index - 1].trust_end : 0;
  auto segment = std::make_unique<PartSegment>(part, pool, range, head_until);
  PartSegment& decoding = *segment;
  run = RunSegment(
      trace, images, request, range, graphs, decoding, [&] { decoding.BeforeFinish(); },
      [&] { decoding.Redo(); });
  if (*run.result) decoding.Finish();
  return segment;
}

void DecodePart(std::span<const uint8_t> trace, const ImageSet& images, const FlowRequest& request,
                const ParallelPlan& plan, size_t index, const PartedSink& sink,
                EventChunkPool& pool, fast::CodeGraphPool& graphs, DecodedPart& out) {
  out.part = index ? sink.NewPart() : sink.NewFirstPart();
  out.segment =
      DecodeSegmentTo(trace, images, request, plan, index, *out.part, pool, graphs, out.run);
  out.part->OnEnd();  // its share of the stream is complete (PartedSink::NewPart)
}

// A part the consumer could not fold: the segment decoded again, the events its part had to
// `sink` directly (its head and tail kept aside as before, and dropped: the stream has them).
Status RedoPartDirectly(std::span<const uint8_t> trace, const ImageSet& images,
                        const FlowRequest& request, const ParallelPlan& plan, size_t index,
                        EventSink& sink, EventChunkPool& pool, fast::CodeGraphPool& graphs) {
  SegmentRun run;
  DecodeSegmentTo(trace, images, request, plan, index, sink, pool, graphs, run);
  if (!*run.result) return tl::unexpected(run.result->error());
  return {};
}

}  // namespace

uint64_t PartedSegmentBytes(uint64_t trace_bytes, unsigned jobs) {
  const uint64_t threads = std::max(jobs, 1u);
  const uint64_t quarter = std::clamp<uint64_t>(trace_bytes / (4 * threads), 256u << 10, 1u << 20);
  const uint64_t long_trace = std::min<uint64_t>(trace_bytes / (kLongSegmentsPerThread * threads),
                                                 kLongSegmentBytes);
  return std::max(quarter, long_trace);
}

Result<FlowSummary> DecodeFlowInParts(std::span<const uint8_t> trace, const ImageSet& images,
                                      const FlowRequest& request, const ParallelPlan& plan,
                                      PartedSink& sink) {
  const std::vector<TraceSegment>& segments = plan.segments;
  const unsigned jobs = std::max(plan.jobs, 1u);
  SegmentTally tally(sink, request, plan);
  StitchedStream& out = tally.out;
  // Declared first, destroyed last: the heads and tails give their chunks back to it.
  EventChunkPool pool(SIZE_MAX);
  fast::CodeGraphPool own_graphs;
  fast::CodeGraphPool& graphs = request.graphs ? *request.graphs : own_graphs;
  std::vector<std::unique_ptr<DecodedPart>> parts(segments.size());
  PartQueue queue(segments.size(), jobs - 1, kPartsAhead * jobs, [&](size_t index) {
    auto part = std::make_unique<DecodedPart>();
    DecodePart(trace, images, request, plan, index, sink, pool, graphs, *part);
    parts[index] = std::move(part);
  });
  // The events the next join reads: the tail of the segment folded last (or all of its events,
  // when its head reached its cut). current->events[i] is event current_base + i of its decode,
  // and the stream has them up to current_from.
  std::optional<DecodedSegment> current;
  size_t current_from = 0, current_base = 0;
  std::string fallback;
  for (size_t index = 0; index < segments.size(); ++index) {
    const TraceSegment& range = segments[index];
    queue.WaitFor(index);
    std::unique_ptr<DecodedPart> decoded = std::move(parts[index]);
    if (!*decoded->run.result) return tl::unexpected(decoded->run.result->error());
    tally.Count(decoded->run, range, index);
    PartSegment& segment = *decoded->segment;
    if (current) {
      DecodedSegment& head = segment.head();
      // A head shorter than what FindJoin would read of the whole decode could join where the
      // whole one would not: then no join.
      const bool enough = segment.whole() || head.events.size() >= NextEventsFindJoinReads(
                                                                       *current, current_from,
                                                                       range.begin);
      const auto join = enough ? FindJoin(*current, current_from, head) : std::nullopt;
      if (!join) {
        fallback = "the decodes before and after the PSB at " + HexOffset(range.begin) + " do not agree";
        break;
      }
      out.PassRange(current->events, current_from, join->prev_end);
      if (segment.whole()) {
        current = std::move(head);
        current_from = join->next_begin;
        current_base = 0;
        if (range.last()) {
          out.PassRange(current->events, current_from, current->events.size());
          current.reset();
        }
        continue;
      }
      out.PassRange(head.events, join->next_begin, head.events.size());
    }
    CountPart(*decoded, tally.summary);
    tally.summary.parts += 1;
    if (std::string why = sink.Refusal(*decoded->part); why.empty()) {
      sink.Fold(std::move(decoded->part));
    } else {
      if (tally.summary.redone_because.empty()) tally.summary.redone_because = why;
      decoded->part.reset();
      tally.summary.parts_redone += 1;
      auto redone = RedoPartDirectly(trace, images, request, plan, index, sink, pool, graphs);
      if (!redone) return tl::unexpected(redone.error());
    }
    if (range.last()) {
      current.reset();
      break;
    }
    current = std::move(segment.tail());
    current_from = 0;
    current_base = segment.tail_base();
  }
  queue.Stop();
  // Where the rest goes on in one piece: from where the unjoined segment began; of its decode,
  // the stream already has (or does not take) the first current_base + current_from events.
  const uint64_t from = fallback.empty() ? 0 : current->range.begin;
  current.reset();
  return tally.Finish(trace, images, graphs, fallback, from, current_base + current_from);
}

}  // namespace ptprof::pt
