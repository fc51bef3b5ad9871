#include "decoders/etm/etm_stretch.h"

#include <utility>

namespace ptprof::etm {

OnePieceStretch::OnePieceStretch(std::unique_ptr<EtmDecoder> decoder, EventPasser& pass,
                                 EventChunkPool& pool, uint64_t begin, size_t skip)
    : decoder_(std::move(decoder)), pass_(pass), pool_(pool), begin_(begin), fed_(begin),
      tail_(&pool), passed_(skip) {}

OnePieceStretch::OnePieceStretch(HeldDecode held, EventPasser& pass, EventChunkPool& pool,
                                 uint64_t begin, size_t skip)
    : decoder_(std::move(held.decoder)), pass_(pass), pool_(pool), begin_(begin), fed_(held.fed),
      seen_(held.base + held.events.size()), tail_(std::move(held.events)),
      tail_marks_(std::move(held.marks)), tail_base_(held.base), in_tail_(true), passed_(skip) {}

void OnePieceStretch::OnEvent(const TraceEvent& event) {
  const uint8_t mark = marks_.empty() ? 0 : marks_.back();
  marks_.clear();
  // From its first decoder error on nothing is taken: OpenCSD's message is not the one the decode
  // in one piece reports while other decoders run, and the caller decodes on from the start.
  if (failed_ || decoder_->fatal_errors() > 0) {
    failed_ = true;
    return;
  }
  Route(event, mark, seen_++);
}

bool OnePieceStretch::Extend(const std::vector<uint8_t>& trace, uint64_t end, uint64_t cut,
                             bool last) {
  if (failed_) return false;
  // What the tail held goes on up to the new cut, then the new events as they come.
  EventChunks held = std::exchange(tail_, EventChunks(&pool_));
  std::vector<uint8_t> held_marks = std::exchange(tail_marks_, {});
  const size_t held_base = tail_base_;
  in_tail_ = false;
  cut_ = cut;
  for (size_t k = 0; k < held.size(); ++k) Route(held[k], held_marks[k], held_base + k);
  if (fed_ == begin_)
    decoder_->DecodePiece(trace, begin_, end, last, *this, marks_);
  else
    decoder_->DecodeOn(trace, fed_, end, last, *this, marks_);
  fed_ = end;
  if (decoder_->fatal_errors() > 0) failed_ = true;
  if (!failed_) ++extends_;
  return !failed_;
}

void OnePieceStretch::Route(const TraceEvent& event, uint8_t mark, size_t number) {
  if (!in_tail_ && event.header.offset >= cut_) {
    in_tail_ = true;
    tail_base_ = number;
  }
  if (in_tail_) {
    tail_.push_back(event);
    tail_marks_.push_back(mark);
  } else if (number >= passed_) {
    pass_.Pass(event, mark);
    passed_ = number + 1;
  }
}

}  // namespace ptprof::etm
