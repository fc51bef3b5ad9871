#include "decoders/etm/etm_piece_joins.h"

#include <optional>
#include <utility>

#include "src/model/part_pipe.h"

namespace ptprof::etm {

void PieceJoins::GiveUp(size_t i, std::string why) {
  total_.sequential_because = std::move(why);
  given_up_at_ = i;
}

bool PieceJoins::StretchOver(size_t i, const std::string& why, size_t held, size_t skip) {
  const bool can = [&] {
    if (i == 0 || (stretch_ && stretch_->pieces() >= kStretchPieces)) return false;
    if (!stretch_) {
      if (std::optional<HeldDecode> decode = held_decode_ ? held_decode_() : std::nullopt) {
        decode->fed = plan_[held].end;  // a worker decodes a piece to its end
        stretch_.emplace(std::move(*decode), pass_, pool_, plan_[held].begin, skip);
      } else {
        auto decoder = decoder_.Clone();
        if (!decoder) return false;
        stretch_.emplace(std::move(*decoder), pass_, pool_, plan_[held].begin, skip);
      }
    }
    const bool last = i + 1 == plan_.size();
    return stretch_->Extend(trace_, plan_[i].end, last ? UINT64_MAX : plan_[i].cut, last);
  }();
  if (!can) {
    GiveUp(i, why);
    return false;
  }
  if (total_.stretched_because.empty()) total_.stretched_because = why;
  ++total_.stretched;
  return true;
}

void PieceJoins::DecodeRest(size_t held, size_t skip, const std::function<void()>& halt,
                            const std::function<void()>& let_go) {
  if (!given_up()) return;
  halt();
  // The workers start no more pieces: a thread is free to consume what this one decodes.
  std::optional<PartPipe> pipe;
  if (consumer_ && pipe.emplace(*consumer_).Start()) pass_.SendTo(*pipe);
  DecodeRestInOnePiece(held, skip, let_go);
  if (pipe) {
    pipe->Drain();
    pass_.SendTo(sink_);
    total_.rest_parts = pipe->parts_folded();
    total_.rest_parts_refused = pipe->parts_refused();
    total_.rest_consumer_light = pipe->found_light();
  }
}

void PieceJoins::DecodeRestInOnePiece(size_t held, size_t skip,
                                      const std::function<void()>& let_go) {
  if (stretch_ && stretch_->Finish(trace_)) return;
  let_go();
  quiet_.Restore();
  uint64_t from = given_up_at_ == 0 ? 0 : plan_[held].begin;
  if (given_up_at_ == 0) skip = 0;
  if (stretch_) {
    from = stretch_->begin();
    skip = stretch_->passed();
  }
  stretch_.reset();
  if (auto rest = decoder_.DecodeAgain(trace_, from, trace_.size(), true, pass_, skip, SIZE_MAX,
                                       total_);
      !rest)
    total_.sequential_because += "; cannot make another decoder: " + rest.error().message;
}

}  // namespace ptprof::etm
