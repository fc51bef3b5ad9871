#include "decoders/pt/parallel_flow.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <span>

#include "decoders/pt/fast/code_blocks.h"
#include "decoders/pt/flow_range.h"
#include "decoders/pt/segment_decode.h"
#include "decoders/pt/segment_join.h"
#include "decoders/pt/segment_tally.h"
#include "decoders/pt/segment_workers.h"
#include "decoders/pt/stitched_stream.h"
#include "decoders/pt/streamed_segment.h"

namespace ptprof::pt {

namespace {

void Emit(StitchedStream& out, const EventChunks& events, size_t from, size_t to) {
  out.PassRange(events, from, to);
}

// The trace cut at its PSBs into segments of about `segment` bytes, the last ones shorter
// (PlanSegments' tapering) when `taper` and several threads decode a trace of two segments or
// more (a shorter one the fast engine decodes in one piece and libipt sequentially).
std::vector<TraceSegment> CutAtPsbs(std::span<const uint8_t> trace, uint64_t segment,
                                    unsigned jobs, bool taper) {
  const unsigned taper_jobs = taper && jobs >= 2 && trace.size() >= 2 * segment ? jobs : 0;
  return PlanSegments(FindPsbOffsets(trace), trace.size(), segment, taper_jobs);
}

}  // namespace

ParallelPlan PlanParallelDecode(std::span<const uint8_t> trace, const FlowRequest& request,
                                bool taper) {
  ParallelPlan plan;
  plan.jobs = request.jobs ? request.jobs : DefaultDecodeJobs();
  // The fast engine always decodes in segments (one thread or more): a segment it does not handle
  // is decoded again with libipt, whose events the stitching then takes instead.
  const bool fast = request.engine == FlowEngine::kFast && FastEngineApplies(request);
  if (fast) {
    const uint64_t segment = request.segment_bytes ? request.segment_bytes : DefaultSegmentBytes();
    plan.segments = CutAtPsbs(trace, segment, plan.jobs, taper);
    if (plan.segments.empty())
      plan.segments.push_back(TraceSegment{0, trace.size(), trace.size(), trace.size()});
    if (plan.jobs >= 2 && plan.segments.size() < 2)
      plan.sequential_because = trace.size() < 2 * segment ? "the trace is smaller than two segments"
                                                            : "too few PSBs to cut the trace at";
    return plan;
  }
  if (plan.jobs < 2) return plan;
  const uint64_t segment = request.segment_bytes ? request.segment_bytes : DefaultSegmentBytes();
  if (trace.size() < 2 * segment) {
    plan.sequential_because = "the trace is smaller than two segments";
    return plan;
  }
  plan.segments = CutAtPsbs(trace, segment, plan.jobs, taper);
  if (plan.segments.size() < 2) plan.sequential_because = "too few PSBs to cut the trace at";
  return plan;
}

Result<FlowSummary> DecodeFlowParallel(std::span<const uint8_t> trace, const ImageSet& images,
                                       const FlowRequest& request, const ParallelPlan& plan,
                                       EventSink& sink) {
  const std::vector<TraceSegment>& segments = plan.segments;
  const unsigned jobs = std::max(plan.jobs, 1u);
  SegmentTally tally(sink, request, plan);
  StitchedStream& out = tally.out;
  // Declared first, destroyed last: every segment's events give their chunks back to it.
  EventChunkPool pool(SIZE_MAX);
  // The fast engine's images and code graph, warm across segments (the request's, when it lends
  // one).
  fast::CodeGraphPool own_graphs;
  fast::CodeGraphPool& graphs = request.graphs ? *request.graphs : own_graphs;
  // The segment decoded last and not yet joined to its successor; its events[i] is event number
  // current_base + i of its decode, and the stream has them up to current_from.
  std::optional<DecodedSegment> current;
  size_t current_from = 0, current_base = 0;
  std::string fallback;
  // jobs - 1 workers decode segments into memory, at most two each ahead of the stitching; this
  // thread decodes the others straight into the stream (SegmentWorkers says which).
  SegmentWorkers workers(segments.size(), jobs - 1, 2 * (jobs - 1),
                         [&](size_t index, SegmentOutcome& outcome) {
                           DecodeCollectedSegment(trace, images, request, segments[index], pool,
                                                  graphs, outcome);
                         });
  // What the stitching thread's work costs, for SegmentWorkers' share: passing on a worker's
  // segment (its events go on when the next segment joins) and decoding one itself.
  using Clock = std::chrono::steady_clock;
  auto seconds_since = [](Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
  };
  bool current_by_worker = false;  // current is a worker's segment
  for (size_t index = 0; index < segments.size(); ++index) {
    const TraceSegment& range = segments[index];
    std::unique_ptr<SegmentOutcome> outcome = workers.Take(index);
    const Clock::time_point start = Clock::now();
    if (!outcome) {
      StreamedSegment streamed(out, pool, range, current ? &*current : nullptr, current_from);
      const SegmentRun run = RunSegment(
          trace, images, request, range, graphs, streamed, [&] { streamed.BeforeFinish(); },
          [&] { streamed.Redo(); });
      if (!*run.result) return tl::unexpected(run.result->error());
      tally.Count(run, range, index);
      if (!streamed.Finish()) {
        fallback = "the decodes before and after the PSB at " + HexOffset(range.begin) + " do not agree";
        break;
      }
      if (range.last()) {
        current.reset();
        break;
      }
      workers.Note(SegmentWorkers::kDecoded, seconds_since(start), current_by_worker);
      current = streamed.TakeTail();
      current_from = 0;
      current_base = streamed.tail_base();
      current_by_worker = false;
      continue;
    }
    if (!*outcome->run.result) return tl::unexpected(outcome->run.result->error());
    tally.Count(outcome->run, range, index);
    if (!current) {  // the first segment: nothing to join it to
      current = std::move(outcome->decoded);
      current_from = current_base = 0;
      current_by_worker = true;
      continue;
    }
    auto join = FindJoin(*current, current_from, outcome->decoded);
    if (!join) {
      fallback = "the decodes before and after the PSB at " + HexOffset(range.begin) + " do not agree";
      break;
    }
    Emit(out, current->events, current_from, join->prev_end);
    if (current_by_worker) workers.Note(SegmentWorkers::kPassed, seconds_since(start));
    current = std::move(outcome->decoded);
    current_from = join->next_begin;
    current_base = 0;
    current_by_worker = true;
  }
  workers.Stop();
  // Where the rest goes on in one piece: from where the unjoined segment's predecessor began; of
  // that decode, the stream already has (or does not take) the first current_base + current_from
  // events.
  if (fallback.empty() && current) Emit(out, current->events, current_from, current->events.size());
  const uint64_t from = fallback.empty() ? 0 : current->range.begin;
  current.reset();
  return tally.Finish(trace, images, graphs, fallback, from, current_base + current_from);
}

}  // namespace ptprof::pt
