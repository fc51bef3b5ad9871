#pragma once
// StreamedSegment is a PSB segment of a parallel decode that the stitching thread decodes itself:
// its events go on to the stream while they are decoded instead of waiting in memory for the
// whole segment, so that thread decodes a share of the trace as well as stitching the others.
// It holds back only what the joins read (decoders/pt/segment_join.h):
//  - its first events, until enough of them are there to join them to the previous segment's
//    (then the previous segment's events up to the join are passed on, then these);
//  - its events from the first at or past its cut on, which the next segment's join reads
//    (TakeTail).
// The stream is exactly what DecodeCollectedSegment's events stitched by FindJoin would give.
#include <cstddef>

#include "src/model/event_chunks.h"
#include "decoders/pt/psb_segments.h"
#include "decoders/pt/segment_join.h"
#include "decoders/pt/stitched_stream.h"

namespace ptprof::pt {

class StreamedSegment : public EventSink {
 public:
  // `prev` (null for the first segment): the segment before, decoded, whose events from
  // `prev_from` on have not been passed on yet. It must outlive this object's decode.
  StreamedSegment(StitchedStream& out, EventChunkPool& pool, const TraceSegment& range,
                  DecodedSegment* prev, size_t prev_from);

  // The decoder's events, offsets in the whole trace.
  void OnEvent(const TraceEvent& event) override;
  // Blocks in bulk, as OnEvent of each: the middle of a segment goes on as batches.
  void OnBlocks(const BlockBatch& batch) override;
  // Where the decoder met the end of its bytes (DecodeFlowRange's before_finish).
  void BeforeFinish();
  // The same bytes are decoded again from the start (libipt after the fast engine stopped): the
  // events seen so far come again and are dropped.
  void Redo();

  // After the decode: false when it does not join the previous segment (nothing of this one or
  // of prev from prev_from on was passed on).
  bool Finish();
  // The events the next segment's join reads (from the first at or past the cut on), for a segment
  // that is not the last; its events[i] is this decode's event number tail_base() + i.
  DecodedSegment TakeTail();
  size_t tail_base() const { return tail_base_; }

 private:
  enum class State { kHead, kStream, kTail, kNoJoin };
  void TryJoin();
  void Feed(const TraceEvent& event, size_t index);
  // Counts `n` more events of this decode, the first at offset[0].. (untrusted_).
  void Count(std::span<const PackedEvent> blocks);
  size_t TrustedUpTo() const;  // this decode's events before this number are trusted

  StitchedStream& out_;
  TraceSegment range_;
  DecodedSegment* prev_;
  size_t prev_from_;
  State state_;
  size_t need_ = 0;         // head events the join reads
  DecodedSegment head_;     // kHead: the first events
  DecodedSegment tail_;     // kTail
  size_t tail_base_ = 0;
  size_t seen_ = 0;         // events of this decode so far
  size_t skip_ = 0;         // events of a redo still to drop
  size_t before_finish_ = SIZE_MAX;
  size_t untrusted_ = SIZE_MAX;  // the first event at or past range.trust_end
};

}  // namespace ptprof::pt
