#include "decoders/pt/segment_decode.h"

#include <algorithm>
#include <vector>

namespace ptprof::pt {

namespace {

// Keeps a segment's events and notes the first that lies at or past the cut and the first at or
// past where trust ends (no scan afterwards).
class CollectingSink : public EventSink {
 public:
  CollectingSink(EventChunks& events, uint64_t cut, uint64_t trust_end)
      : events_(events), cut_(cut), trust_end_(trust_end) {}
  void OnEvent(const TraceEvent& event) override {
    const uint64_t offset = event.header.offset;
    if (at_cut == SIZE_MAX && offset >= cut_) at_cut = events_.size();
    if (untrusted == SIZE_MAX && offset >= trust_end_) untrusted = events_.size();
    events_.push_back(event);
  }
  void OnBlocks(const BlockBatch& batch) override {
    // The first block at or past the cut and the trust end, while not found yet.
    Note(at_cut, batch.blocks, cut_);
    Note(untrusted, batch.blocks, trust_end_);
    events_.Append(batch);
  }
  void Reset() {
    events_.Clear();
    at_cut = untrusted = SIZE_MAX;
  }
  size_t at_cut = SIZE_MAX;
  size_t untrusted = SIZE_MAX;

 private:
  // `index` of the first of `blocks` (appended next) at or past `offset`, unless known already.
  void Note(size_t& index, std::span<const PackedEvent> blocks, uint64_t offset) const {
    if (index != SIZE_MAX) return;
    const size_t i = FirstAtOrPast(blocks, offset);
    if (i < blocks.size()) index = events_.size() + i;
  }

  EventChunks& events_;
  uint64_t cut_, trust_end_;
};

}  // namespace

SegmentRun RunSegment(std::span<const uint8_t> trace, const ImageSet& images,
                      const FlowRequest& request, const TraceSegment& range,
                      fast::CodeGraphPool& graphs, EventSink& sink,
                      const std::function<void()>& before_finish,
                      const std::function<void()>& handed_over, RunRefWindow run_refs) {
  SegmentRun run;
  const std::span<const uint8_t> bytes = trace.subspan(range.begin, range.end - range.begin);
  // What the fast engine does not produce (ticks) comes from libipt.
  if (request.engine == FlowEngine::kFast && FastEngineApplies(request)) {
    const uint64_t trust_end = range.last() ? UINT64_MAX : range.trust_end - range.begin;
    auto fast = DecodeFlowRangeFast(bytes, images, request, sink, before_finish, trust_end, &graphs,
                                    range.begin, run_refs);
    if (!fast) {
      run.result = tl::unexpected(fast.error());
      return run;
    }
    if (fast->handled) {
      run.fast = true;
      run.result = std::move(fast->range);
      return run;
    }
    run.fallback = fast->why;
    handed_over();
  }
  run.result = DecodeFlowRange(bytes, images, request, sink, before_finish, range.begin, &graphs);
  return run;
}

RunRefWindow RunRefWindowOf(std::span<const uint8_t> trace, const TraceSegment& range) {
  if (range.last() || range.cut <= range.begin) return {};
  const std::vector<uint64_t> psbs =
      FindPsbOffsets(trace.subspan(range.begin, range.cut - range.begin));
  // psbs[0] is the segment's own PSB (begin), or for the first segment the first PSB after it.
  if (psbs.size() < 4) return {};
  return RunRefWindow{range.begin + psbs[2], range.begin + psbs.back(), 4096};
}

void DecodeCollectedSegment(std::span<const uint8_t> trace, const ImageSet& images,
                            const FlowRequest& request, const TraceSegment& range,
                            EventChunkPool& pool, fast::CodeGraphPool& graphs,
                            SegmentOutcome& out) {
  out.decoded.range = range;
  out.decoded.events = EventChunks(&pool);
  CollectingSink collect(out.decoded.events, range.cut, range.trust_end);
  size_t before_finish = 0;
  out.run = RunSegment(
      trace, images, request, range, graphs, collect,
      [&] { before_finish = out.decoded.events.size(); },
      [&] {
        collect.Reset();
        before_finish = 0;
      },
      RunRefWindowOf(trace, range));
  if (!*out.run.result) return;
  out.decoded.at_cut = collect.at_cut;
  if (range.last()) {
    out.decoded.trusted = out.decoded.events.size();
    return;
  }
  out.decoded.trusted = std::min(before_finish, collect.untrusted);
}

}  // namespace ptprof::pt
