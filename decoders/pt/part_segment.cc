#include "decoders/pt/part_segment.h"

#include <algorithm>

namespace ptprof::pt {

PartSegment::PartSegment(EventSink& part, EventChunkPool& pool, const TraceSegment& range,
                         uint64_t head_until)
    : part_(part),
      range_(range),
      head_until_(head_until),
      state_(head_until ? State::kHead : State::kStream) {
  head_.range = tail_.range = range;
  head_.events = EventChunks(&pool);
  tail_.events = EventChunks(&pool);
}

size_t PartSegment::TrustedUpTo() const {
  if (range_.last()) return SIZE_MAX;  // all of the last segment's events count
  return std::min(before_finish_, untrusted_);
}

void PartSegment::NoteUntrusted(std::span<const PackedEvent> blocks) {
  if (untrusted_ != SIZE_MAX) return;
  const size_t i = FirstAtOrPast(blocks, range_.trust_end);
  if (i < blocks.size()) untrusted_ = seen_ + i;
}

void PartSegment::MaybeEndHead() {
  if (head_reached_cut_ || head_past_until_ == SIZE_MAX ||
      head_.events.size() < head_past_until_ + head_margin_)
    return;
  state_ = State::kStream;
}

void PartSegment::OnEvent(const TraceEvent& event) {
  if (skip_) {
    --skip_;
    return;
  }
  const size_t index = seen_++;
  const uint64_t offset = event.header.offset;
  if (untrusted_ == SIZE_MAX && offset >= range_.trust_end) untrusted_ = index;
  if (state_ != State::kHead) {
    StreamOrKeep(event);
    return;
  }
  if (head_past_until_ == SIZE_MAX && offset >= head_until_) head_past_until_ = index;
  if (!range_.last() && offset >= range_.cut) head_reached_cut_ = true;
  if (std::holds_alternative<Instruction>(event.body)) head_margin_ = kInsnHeadMargin;
  head_.events.push_back(event);
  MaybeEndHead();
}

void PartSegment::StreamOrKeep(const TraceEvent& event) {
  if (state_ == State::kStream && !range_.last() && event.header.offset >= range_.cut) {
    state_ = State::kTail;
    tail_base_ = seen_ - 1;
    tail_.at_cut = 0;
  }
  if (state_ == State::kTail) {
    tail_.events.push_back(event);
    return;
  }
  // Before the first event at or past the cut no join can end this segment's share (see
  // StreamedSegment::Feed), so it goes on.
  part_.OnEvent(event);
}

void PartSegment::OnBlocks(const BlockBatch& batch) {
  std::span<const PackedEvent> blocks = batch.blocks;
  if (skip_) {
    const size_t dropped = std::min(skip_, blocks.size());
    skip_ -= dropped;
    blocks = blocks.subspan(dropped);
  }
  BlockBatch piece = batch;
  while (!blocks.empty()) {
    size_t take = blocks.size();
    switch (state_) {
      case State::kHead: {
        // Up to where the head may end, then look again.
        piece.blocks = blocks;
        if (head_past_until_ == SIZE_MAX) {
          const size_t i = FirstAtOrPast(blocks, head_until_);
          if (i < blocks.size()) {
            head_past_until_ = seen_ + i;
            take = std::min(take, i + 1);
          }
        } else {
          const size_t want = head_past_until_ + head_margin_;
          take = std::min(take, want > seen_ ? want - seen_ : 1);
        }
        piece.blocks = blocks.first(take);
        if (!range_.last() && FirstAtOrPast(piece.blocks, range_.cut) < take)
          head_reached_cut_ = true;
        NoteUntrusted(piece.blocks);
        seen_ += take;
        head_.events.Append(piece);
        MaybeEndHead();
        break;
      }
      case State::kStream: {
        // A decode's events come in trace order (their offsets never decrease), so a batch
        // whose last block lies before the cut lies before it whole. None of these is past
        // range.trust_end either, which is at or past the cut.
        const size_t before_cut =
            range_.last() || blocks.back().offset < range_.cut ? take
                                                                : FirstAtOrPast(blocks, range_.cut);
        take = before_cut;
        if (before_cut) {
          piece.blocks = blocks.first(before_cut);
          seen_ += before_cut;
          part_.OnBlocks(piece);
        }
        if (before_cut < blocks.size()) {
          state_ = State::kTail;
          tail_base_ = seen_;
          tail_.at_cut = 0;
        }
        break;
      }
      case State::kTail:
        piece.blocks = blocks;
        NoteUntrusted(piece.blocks);
        seen_ += take;
        tail_.events.Append(piece);
        break;
    }
    blocks = blocks.subspan(take);
  }
}

void PartSegment::Finish() {
  const size_t trusted = TrustedUpTo();
  head_.trusted = std::min(head_.events.size(), trusted);
  head_.at_cut = SIZE_MAX;  // FindJoin looks for it when this whole segment is the previous one
  if (range_.last() || whole()) return;
  if (state_ == State::kStream) {
    // No event reached the cut: nothing can join the next segment, whose join then fails.
    tail_base_ = seen_;
    tail_.at_cut = SIZE_MAX;
    state_ = State::kTail;
  }
  tail_.trusted =
      trusted <= tail_base_ ? 0 : std::min(trusted - tail_base_, tail_.events.size());
}

}  // namespace ptprof::pt
