#include "decoders/etm/etm_piece_split.h"

#include <algorithm>

#include "decoders/etm/element_events.h"

namespace ptprof::etm {

PieceSplit::PieceSplit(EventSink& part, EventChunkPool& pool, uint64_t head_until, uint64_t cut)
    : part_(part), head_until_(head_until), cut_(cut),
      state_(head_until ? State::kHead : State::kPart), head_(&pool), tail_(&pool) {}

void PieceSplit::OnEvent(const TraceEvent& event) {
  const uint8_t mark = marks_.empty() ? 0 : marks_.back();
  marks_.clear();
  ++seen_;
  const uint64_t offset = event.header.offset;
  if (!lost_sync_ && IsNoSync(event) && !IsDecoderStart(event)) lost_sync_ = offset;
  if (state_ == State::kHead) {
    head_.push_back(event);
    head_marks_.push_back(mark);
    if (offset >= cut_) reached_cut_ = true;
    if (!reached_cut_ && offset >= head_until_ && ++past_until_ >= kMargin) state_ = State::kPart;
    return;
  }
  if (!IsEndOfTrace(event)) min_offset_ = std::min(min_offset_, offset);
  if (state_ == State::kPart && offset >= cut_) {
    state_ = State::kTail;
    tail_base_ = seen_ - 1;
  }
  if (state_ == State::kTail) {
    tail_.push_back(event);
    tail_marks_.push_back(mark);
    return;
  }
  tally_.Add(event, mark);
  part_.OnEvent(event);
}

}  // namespace ptprof::etm
