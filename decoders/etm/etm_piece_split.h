#pragma once
// PieceSplit takes the events of one piece of a CoreSight decode in parts (etm_parted_decode.cc)
// as its decoder makes them, on the thread that decodes it, and sends most of them straight on to
// a part of the consumer (src/model/parted_sink.h), keeping aside, with their marks, only what
// the joins read:
//  - its first events (head), up to past where the previous piece's decode ends (`head_until`),
//    which FindEtmJoin (etm_segments.h) lines up with the previous piece's last events;
//  - its events from the first at or past its cut on (tail), which the next piece's join reads.
// A piece whose head reaches its cut keeps every event in the head (whole()) and passes nothing
// to its part. The events are not in the order of their offsets everywhere (a packet of one
// source can end after packets of another that began later), so the head runs on for kMargin
// events past head_until, and the split notes the smallest offset it sent past the head: a join
// is only taken where that lies past every event the join lined up.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "decoders/etm/event_passer.h"
#include "src/model/event_chunks.h"

namespace ptprof::etm {

class PieceSplit : public EventSink {
 public:
  static constexpr size_t kMargin = 64;

  // `head_until`: 0 for the first piece (no head); `cut`: UINT64_MAX for the last (no tail).
  PieceSplit(EventSink& part, EventChunkPool& pool, uint64_t head_until, uint64_t cut);

  // The vector the piece's decoder marks its events in (EtmDecoder::DecodePiece), which the split
  // empties as it reads them.
  std::vector<uint8_t>& decoder_marks() { return marks_; }

  void OnEvent(const TraceEvent& event) override;

  // Every event in the head: the head reached the cut, or the decode ended in it.
  bool whole() const { return state_ == State::kHead; }
  EventChunks& head() { return head_; }
  std::vector<uint8_t>& head_marks() { return head_marks_; }
  // For a piece that is not whole(): its tail()[i] is event number tail_base() + i of its decode
  // (a tail may be empty).
  EventChunks& tail() { return tail_; }
  std::vector<uint8_t>& tail_marks() { return tail_marks_; }
  size_t tail_base() const { return state_ == State::kTail ? tail_base_ : seen_; }
  // The decode's events: head, part and tail.
  size_t seen() const { return seen_; }
  // What went to the part.
  const PartTally& tally() const { return tally_; }
  // The smallest offset of an event past the head (UINT64_MAX: none), end-of-trace markers
  // (which have none) aside.
  uint64_t min_offset_past_head() const { return min_offset_; }
  // The offset of the first "no sync" element other than the decoder's first: the source lost
  // synchronisation there (damage), and its decoder's state may differ from the uncut decode's.
  std::optional<uint64_t> lost_sync() const { return lost_sync_; }

 private:
  enum class State { kHead, kPart, kTail };

  EventSink& part_;
  std::vector<uint8_t> marks_;
  uint64_t head_until_, cut_;
  State state_;
  EventChunks head_, tail_;
  std::vector<uint8_t> head_marks_, tail_marks_;
  size_t past_until_ = 0;  // head events at or past head_until
  bool reached_cut_ = false;
  size_t tail_base_ = 0;
  size_t seen_ = 0;
  PartTally tally_;
  uint64_t min_offset_ = UINT64_MAX;
  std::optional<uint64_t> lost_sync_;
};

}  // namespace ptprof::etm
