#pragma once
// UnendedSink passes a decode's stream on to `next` without its end, for several decodes feeding
// one consumer that is ended once after them (the AUX runs of a cs_etm perf.data, one after
// another). When `next` takes its stream in parts (parted_sink.h) so does this sink: the parts
// are `next`'s own, made, checked and folded by it.
#include <memory>
#include <string>

#include "src/model/parted_sink.h"

namespace ptprof {

class UnendedSink : public PartedSink {
 public:
  explicit UnendedSink(EventSink& next) : next_(next), parted_(dynamic_cast<PartedSink*>(&next)) {}

  void OnEvent(const TraceEvent& event) override { next_.OnEvent(event); }
  void OnBlocks(const BlockBatch& batch) override { next_.OnBlocks(batch); }
  void OnEnd() override {}

  bool TakesParts() const override { return parted_ && parted_->TakesParts(); }
  std::unique_ptr<EventSink> NewPart() const override { return parted_->NewPart(); }
  std::unique_ptr<EventSink> NewFirstPart() const override { return parted_->NewFirstPart(); }
  std::string Refusal(const EventSink& part) const override { return parted_->Refusal(part); }
  void Fold(std::unique_ptr<EventSink> part) override { parted_->Fold(std::move(part)); }
  uint64_t PartBytes() const override { return parted_ ? parted_->PartBytes() : 0; }

 private:
  EventSink& next_;
  PartedSink* parted_;  // null: next_ takes one stream
};

}  // namespace ptprof
