#include "decoders/pt/streamed_segment.h"

#include <algorithm>

namespace ptprof::pt {

StreamedSegment::StreamedSegment(StitchedStream& out, EventChunkPool& pool,
                                 const TraceSegment& range, DecodedSegment* prev, size_t prev_from)
    : out_(out),
      range_(range),
      prev_(prev),
      prev_from_(prev_from),
      state_(prev ? State::kHead : State::kStream) {
  head_.range = tail_.range = range;
  head_.events = EventChunks(&pool);
  tail_.events = EventChunks(&pool);
  if (prev) need_ = NextEventsFindJoinReads(*prev, prev_from, range.begin);
}

size_t StreamedSegment::TrustedUpTo() const {
  if (range_.last()) return SIZE_MAX;  // all of the last segment's events count
  return std::min(before_finish_, untrusted_);
}

void StreamedSegment::OnEvent(const TraceEvent& event) {
  if (skip_) {
    --skip_;
    return;
  }
  const size_t index = seen_++;
  if (untrusted_ == SIZE_MAX && event.header.offset >= range_.trust_end) untrusted_ = index;
  switch (state_) {
    case State::kHead:
      head_.events.push_back(event);
      if (head_.events.size() >= need_) TryJoin();
      return;
    case State::kStream:
    case State::kTail:
      Feed(event, index);
      return;
    case State::kNoJoin:
      return;
  }
}

void StreamedSegment::Count(std::span<const PackedEvent> blocks) {
  if (untrusted_ == SIZE_MAX) {
    const size_t i = FirstAtOrPast(blocks, range_.trust_end);
    if (i < blocks.size()) untrusted_ = seen_ + i;
  }
  seen_ += blocks.size();
}

void StreamedSegment::OnBlocks(const BlockBatch& batch) {
  std::span<const PackedEvent> blocks = batch.blocks;
  if (skip_) {
    const size_t dropped = std::min(skip_, blocks.size());
    skip_ -= dropped;
    blocks = blocks.subspan(dropped);
  }
  BlockBatch part = batch;
  while (!blocks.empty()) {
    switch (state_) {
      case State::kHead: {
        // One by one up to what the join reads, then the join.
        const size_t want = need_ > head_.events.size() ? need_ - head_.events.size() : 1;
        const size_t take = std::min(want, blocks.size());
        part.blocks = blocks.first(take);
        Count(part.blocks);
        head_.events.Append(part);
        blocks = blocks.subspan(take);
        if (head_.events.size() >= need_) TryJoin();
        break;
      }
      case State::kStream: {
        // Everything before the first block at or past the cut goes on at once (see Feed).
        const size_t before_cut =
            range_.last() ? blocks.size() : FirstAtOrPast(blocks, range_.cut);
        if (before_cut) {
          part.blocks = blocks.first(before_cut);
          Count(part.blocks);
          out_.PassBlocks(part);
          blocks = blocks.subspan(before_cut);
        }
        if (!blocks.empty()) {
          state_ = State::kTail;
          tail_base_ = seen_;
          tail_.at_cut = 0;
        }
        break;
      }
      case State::kTail:
        part.blocks = blocks;
        Count(part.blocks);
        tail_.events.Append(part);
        blocks = {};
        break;
      case State::kNoJoin:
        Count(blocks);
        blocks = {};
        break;
    }
  }
}

void StreamedSegment::BeforeFinish() { before_finish_ = seen_; }

void StreamedSegment::Redo() {
  skip_ = seen_;
  before_finish_ = SIZE_MAX;
}

void StreamedSegment::TryJoin() {
  head_.trusted = std::min(head_.events.size(), TrustedUpTo());
  const auto join = FindJoin(*prev_, prev_from_, head_);
  if (!join) {
    state_ = State::kNoJoin;
    head_.events.Clear();
    return;
  }
  out_.PassRange(prev_->events, prev_from_, join->prev_end);
  prev_->events.Clear();
  prev_ = nullptr;
  state_ = State::kStream;
  // The head's events after the join, as Feed would take them one by one: those before the
  // first at or past the cut go on (in batches), the rest start the tail.
  size_t i = join->next_begin;
  size_t stream_end = i;
  while (stream_end < head_.events.size() &&
         (range_.last() || head_.events.OffsetAt(stream_end) < range_.cut))
    ++stream_end;
  out_.PassRange(head_.events, i, stream_end);
  for (i = stream_end; i < head_.events.size(); ++i) Feed(head_.events[i], i);
  head_.events.Clear();
}

void StreamedSegment::Feed(const TraceEvent& event, size_t index) {
  if (state_ == State::kStream && !range_.last() && event.header.offset >= range_.cut) {
    state_ = State::kTail;
    tail_base_ = index;
    tail_.at_cut = 0;
  }
  if (state_ == State::kTail) {
    tail_.events.push_back(event);
    return;
  }
  // Before the first event at or past the cut, an event cannot be where the next join ends this
  // segment's part: the join lines up equal events, and every event of the next segment's decode
  // lies at or past its start, this cut (SameEvent compares offsets). So it goes on at once.
  out_.Pass(event);
}

bool StreamedSegment::Finish() {
  if (state_ == State::kHead) TryJoin();
  if (state_ == State::kNoJoin) return false;
  if (range_.last()) return true;
  if (state_ == State::kStream) {
    // No event reached the cut: nothing here can join the next segment (see Feed), whose join
    // then fails and the decode goes on sequentially after what was passed on.
    tail_base_ = seen_;
    tail_.at_cut = SIZE_MAX;
    state_ = State::kTail;
  }
  const size_t trusted = TrustedUpTo();
  tail_.trusted = trusted <= tail_base_ ? 0 : std::min(trusted - tail_base_, tail_.events.size());
  return true;
}

DecodedSegment StreamedSegment::TakeTail() { return std::move(tail_); }

}  // namespace ptprof::pt
