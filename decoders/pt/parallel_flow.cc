#include "decoders/pt/parallel_flow.h"

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <thread>

#include "decoders/pt/fast/code_blocks.h"
#include "decoders/pt/flow_range.h"
#include "decoders/pt/segment_join.h"

namespace ptprof::pt {

namespace {

std::atomic<unsigned> default_jobs{0};  // 0: one
std::atomic<uint64_t> default_segment_bytes{256u << 10};

// Keeps a segment's events, moved to offsets in the whole trace, and notes the first that lies
// at or past the cut and the first at or past where trust ends (no scan afterwards).
class CollectingSink : public EventSink {
 public:
  CollectingSink(EventChunks& events, uint64_t base, uint64_t cut, uint64_t trust_end)
      : events_(events), base_(base), cut_(cut), trust_end_(trust_end) {}
  void OnEvent(const TraceEvent& event) override {
    const uint64_t offset = event.header.offset + base_;
    if (at_cut == SIZE_MAX && offset >= cut_) at_cut = events_.size();
    if (untrusted == SIZE_MAX && offset >= trust_end_) untrusted = events_.size();
    events_.push_back(event);
    events_.back().header.offset = offset;
  }
  void Reset() {
    events_.Clear();
    at_cut = untrusted = SIZE_MAX;
  }
  size_t at_cut = SIZE_MAX;
  size_t untrusted = SIZE_MAX;

 private:
  EventChunks& events_;
  uint64_t base_, cut_, trust_end_;
};

// Passes events on to the real sink and counts them the way FlowSummary does; `skip` events are
// dropped first and offsets are moved by `base` (for a sequential decode from inside the trace).
class ForwardingSink : public EventSink {
 public:
  explicit ForwardingSink(EventSink& next) : next_(next) {}
  void Restart(uint64_t base, size_t skip) {
    base_ = base;
    skip_ = skip;
  }
  void OnEvent(const TraceEvent& event) override {
    if (skip_) {
      --skip_;
      return;
    }
    if (base_ == 0) {
      Pass(event);
      return;
    }
    TraceEvent moved = event;
    moved.header.offset += base_;
    Pass(moved);
  }
  void Pass(const TraceEvent& event) {
    if (const auto* block = std::get_if<ExecBlock>(&event.body)) {
      blocks += 1;
      insns += block->insns;
    } else if (std::holds_alternative<Instruction>(event.body)) {
      insns += 1;
    } else if (std::holds_alternative<TraceGap>(event.body)) {
      gaps += 1;
    }
    next_.OnEvent(event);
  }
  uint64_t blocks = 0, insns = 0, gaps = 0;

 private:
  EventSink& next_;
  uint64_t base_ = 0;
  size_t skip_ = 0;
};

std::vector<uint8_t> BytesOf(const std::vector<uint8_t>& trace, uint64_t begin, uint64_t end) {
  return std::vector<uint8_t>(trace.begin() + static_cast<std::ptrdiff_t>(begin),
                              trace.begin() + static_cast<std::ptrdiff_t>(end));
}

struct SegmentOutcome {
  DecodedSegment decoded;
  std::optional<Result<FlowRangeResult>> result;
  bool fast = false;     // the fast engine decoded it
  std::string fallback;  // why the fast engine handed it to libipt
};

void DecodeSegment(const std::vector<uint8_t>& trace, const ImageSet& images,
                   const FlowRequest& request, const TraceSegment& range, EventChunkPool& pool,
                   fast::CodeGraphPool& graphs, SegmentOutcome& out) {
  out.decoded.range = range;
  out.decoded.events = EventChunks(&pool);
  const std::vector<uint8_t> bytes = BytesOf(trace, range.begin, range.end);
  CollectingSink collect(out.decoded.events, range.begin, range.cut, range.trust_end);
  size_t before_finish = 0;
  if (request.engine == FlowEngine::kFast) {
    const uint64_t trust_end = range.last() ? UINT64_MAX : range.trust_end - range.begin;
    auto fast = DecodeFlowRangeFast(bytes, images, request, collect,
                                    [&] { before_finish = out.decoded.events.size(); }, trust_end,
                                    &graphs);
    if (!fast) {
      out.result = tl::unexpected(fast.error());
      return;
    }
    if (fast->handled) {
      out.fast = true;
      out.result = std::move(fast->range);
    } else {
      out.fallback = fast->why;
      collect.Reset();
      before_finish = 0;
    }
  }
  if (!out.fast)
    out.result = DecodeFlowRange(bytes, images, request, collect,
                                 [&] { before_finish = out.decoded.events.size(); });
  if (!*out.result) return;
  out.decoded.at_cut = collect.at_cut;
  if (range.last()) {
    out.decoded.trusted = out.decoded.events.size();
    return;
  }
  out.decoded.trusted = std::min(before_finish, collect.untrusted);
}

std::string Hex(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%" PRIx64, value);
  return text;
}

// A segment being decoded on its own thread.
struct InFlight {
  std::unique_ptr<SegmentOutcome> outcome;
  std::thread thread;
};

// Waits for every thread still running (on every way out of the decode).
struct JoinAll {
  std::deque<InFlight>& window;
  void Now() {
    for (InFlight& slot : window)
      if (slot.thread.joinable()) slot.thread.join();
    window.clear();
  }
  ~JoinAll() { Now(); }
};

void Emit(ForwardingSink& out, const EventChunks& events, size_t from, size_t to) {
  for (size_t i = from; i < to; ++i) out.Pass(events[i]);
}

}  // namespace

void SetDefaultDecodeJobs(unsigned jobs) { default_jobs = jobs; }

unsigned DefaultDecodeJobs() {
  const unsigned jobs = default_jobs;
  // One thread until segments of real traces are shown to join (docs/performance.md): a decode
  // whose segments do not join does the work of its first segments twice.
  return jobs ? jobs : 1u;
}

void SetDefaultSegmentBytes(uint64_t bytes) { default_segment_bytes = std::max<uint64_t>(bytes, 1); }

uint64_t DefaultSegmentBytes() { return default_segment_bytes; }

ParallelPlan PlanParallelDecode(const std::vector<uint8_t>& trace, const FlowRequest& request) {
  ParallelPlan plan;
  plan.jobs = request.jobs ? request.jobs : DefaultDecodeJobs();
  // The fast engine always decodes in segments (one thread or more): a segment it does not handle
  // is decoded again with libipt, whose events the stitching then takes instead.
  const bool fast = request.engine == FlowEngine::kFast && FastEngineApplies(request);
  if (fast) {
    const uint64_t segment = request.segment_bytes ? request.segment_bytes : DefaultSegmentBytes();
    plan.segments = PlanSegments(FindPsbOffsets(trace), trace.size(), segment);
    if (plan.segments.empty())
      plan.segments.push_back(TraceSegment{0, trace.size(), trace.size(), trace.size()});
    if (plan.jobs >= 2 && plan.segments.size() < 2)
      plan.sequential_because = trace.size() < 2 * segment ? "the trace is smaller than two segments"
                                                            : "too few PSBs to cut the trace at";
    return plan;
  }
  if (plan.jobs < 2) return plan;
  if (request.tasks) {
    plan.sequential_because = "the tasks from sideband are followed in trace order";
    return plan;
  }
  const uint64_t segment = request.segment_bytes ? request.segment_bytes : DefaultSegmentBytes();
  if (trace.size() < 2 * segment) {
    plan.sequential_because = "the trace is smaller than two segments";
    return plan;
  }
  plan.segments = PlanSegments(FindPsbOffsets(trace), trace.size(), segment);
  if (plan.segments.size() < 2) plan.sequential_because = "too few PSBs to cut the trace at";
  return plan;
}

Result<FlowSummary> DecodeFlowParallel(const std::vector<uint8_t>& trace, const ImageSet& images,
                                       const FlowRequest& request, const ParallelPlan& plan,
                                       EventSink& sink) {
  const std::vector<TraceSegment>& segments = plan.segments;
  ForwardingSink out(sink);
  // Declared first, destroyed last: every segment's events give their chunks back to it.
  EventChunkPool pool(SIZE_MAX);
  fast::CodeGraphPool graphs;  // the fast engine's images and code graph, warm across segments
  FlowSummary summary;
  summary.segments = segments.size();
  summary.sequential_because = plan.sequential_because;
  bool synced = false;
  std::optional<DecodedSegment> current;  // decoded, not yet joined to its successor
  size_t current_from = 0;
  std::string fallback;
  // A window of `jobs` segments decodes on their own threads while this one stitches and passes
  // on the oldest: the sink's work overlaps the decoding.
  std::deque<InFlight> window;
  JoinAll join_all{window};
  size_t launched = 0;
  auto launch = [&] {
    while (launched < segments.size() && window.size() < plan.jobs) {
      InFlight& slot = window.emplace_back();
      slot.outcome = std::make_unique<SegmentOutcome>();
      slot.thread = std::thread(DecodeSegment, std::cref(trace), std::cref(images),
                                std::cref(request), std::cref(segments[launched]),
                                std::ref(pool), std::ref(graphs), std::ref(*slot.outcome));
      ++launched;
    }
  };
  for (size_t index = 0; index < segments.size(); ++index) {
    launch();
    window.front().thread.join();
    std::unique_ptr<SegmentOutcome> outcome = std::move(window.front().outcome);
    window.pop_front();
    if (!*outcome->result) return tl::unexpected(outcome->result->error());
    FlowRangeResult& result = **outcome->result;
    synced = synced || result.synced;
    if (request.engine == FlowEngine::kFast) {
      (outcome->fast ? summary.fast_segments : summary.libipt_segments) += 1;
      if (!outcome->fast && summary.fallback_because.empty())
        summary.fallback_because =
            "segment at " + Hex(outcome->decoded.range.begin) + ": " + outcome->fallback;
    }
    if (index == 0) {
      summary.warnings = result.summary.warnings;
      current = std::move(outcome->decoded);
      continue;
    }
    auto join = FindJoin(*current, current_from, outcome->decoded);
    if (!join) {
      fallback = "the decodes before and after the PSB at " + Hex(outcome->decoded.range.begin) +
                 " do not agree";
      break;
    }
    Emit(out, current->events, current_from, join->prev_end);
    current = std::move(outcome->decoded);
    current_from = join->next_begin;
  }
  join_all.Now();
  if (!fallback.empty()) {
    // The rest sequentially, from where the unjoined segment began (its first events were
    // already passed on, or were the startup of a decode the stream does not take).
    summary.sequential_because = fallback;
    const std::vector<uint8_t> rest = BytesOf(trace, current->range.begin, trace.size());
    out.Restart(current->range.begin, current_from);
    current.reset();
    auto range = DecodeFlowRange(rest, images, request, out, {});
    if (!range) return tl::unexpected(range.error());
    synced = synced || range->synced;
  } else {
    Emit(out, current->events, current_from, current->events.size());
  }
  if (auto at = TruncatedPacketAt(std::span<const uint8_t>(trace.data(), trace.size())))
    out.Pass(TruncationGap(*at, request.cpu));
  sink.OnEnd();
  summary.blocks = out.blocks;
  summary.insns = out.insns;
  summary.gaps = out.gaps;
  summary.has_psb = synced || HasPsb(trace);
  return summary;
}

}  // namespace ptprof::pt
