#pragma once
// PartSegment is a PSB segment of a parted decode (decoders/pt/parted_flow.h): it is decoded on
// any thread before the segment ahead of it is, and its events go straight on to a part of the
// consumer (PartedSink::NewPart) as they are decoded, except what the joins read:
//  - its first events (head), up to well past where the previous segment's trusted decode ends
//    (`head_until`, that segment's trust_end), so that FindJoin has every event of it that it can
//    read (the folding thread checks with NextEventsFindJoinReads);
//  - its events from the first at or past its cut on (tail), which the next segment's join reads.
// Joined in order, heads and tails passed on around the folded parts give exactly the stream of
// DecodeCollectedSegment's events stitched by FindJoin. A segment whose head reaches its cut keeps
// every event in the head (whole()) and passes nothing to its part.
#include <cstddef>
#include <cstdint>

#include "src/model/event_chunks.h"
#include "decoders/pt/psb_segments.h"
#include "decoders/pt/segment_join.h"
#include "decoders/pt/stitched_stream.h"

namespace ptprof::pt {

class PartSegment : public EventSink {
 public:
  // Head events kept after the first at or past `head_until`: more than FindJoin reads beyond the
  // previous segment's trusted events (its startup window and the events before the cut).
  static constexpr size_t kHeadMargin = 512;
  // The same for a stream of instructions, whose join windows are wider (kInsnJoinWindows).
  static constexpr size_t kInsnHeadMargin = 8192;
  static_assert(kHeadMargin > kBlockJoinWindows.next_startup + kBlockJoinWindows.before_cut);
  static_assert(kInsnHeadMargin > kInsnJoinWindows.next_startup + kInsnJoinWindows.before_cut);

  // `head_until`: 0 for the first segment (no head).
  PartSegment(EventSink& part, EventChunkPool& pool, const TraceSegment& range,
              uint64_t head_until);

  void OnEvent(const TraceEvent& event) override;
  void OnBlocks(const BlockBatch& batch) override;
  // Where the decoder met the end of its bytes (DecodeFlowRange's before_finish).
  void BeforeFinish() { before_finish_ = seen_; }
  // The same bytes are decoded again from the start (libipt after the fast engine stopped): the
  // events seen so far come again, equal, and are dropped.
  void Redo() {
    skip_ = seen_;
    before_finish_ = SIZE_MAX;
  }
  // After the decode: sets which head and tail events are trusted.
  void Finish();

  bool whole() const { return state_ == State::kHead; }
  DecodedSegment& head() { return head_; }
  // For a segment that is not the last and not whole(): its events[i] is this decode's event
  // number tail_base() + i.
  DecodedSegment& tail() { return tail_; }
  size_t tail_base() const { return tail_base_; }

 private:
  enum class State { kHead, kStream, kTail };
  size_t TrustedUpTo() const;  // this decode's events before this number are trusted
  void NoteUntrusted(std::span<const PackedEvent> blocks);
  // In kHead, after events were added: streams on from now if the head is long enough and holds
  // nothing at or past the cut.
  void MaybeEndHead();
  void StreamOrKeep(const TraceEvent& event);

  EventSink& part_;
  TraceSegment range_;
  uint64_t head_until_;
  State state_;
  DecodedSegment head_, tail_;
  size_t head_margin_ = kHeadMargin;  // kInsnHeadMargin once an instruction came
  size_t head_past_until_ = SIZE_MAX;  // the first head event at or past head_until
  bool head_reached_cut_ = false;
  size_t tail_base_ = 0;
  size_t seen_ = 0;  // events of this decode so far
  size_t skip_ = 0;  // events of a redo still to drop
  size_t before_finish_ = SIZE_MAX;
  size_t untrusted_ = SIZE_MAX;  // the first event at or past range.trust_end
};

}  // namespace ptprof::pt
