#pragma once
// InsnExpansion turns each Arm ExecBlock of a CoreSight decode into the instructions it executed
// (RangeExpander) on its way to `next`, for `decode --insn`. When `next` takes its stream in parts
// (src/model/parted_sink.h: the output writers) so does the expansion: each part expands its own
// blocks into a part of `next`, on the thread that decodes them, and the parts fold as `next`'s.
#include <memory>
#include <string>

#include "decoders/etm/range_expander.h"
#include "src/model/parted_sink.h"

namespace ptprof::etm {

class InsnExpansion : public PartedSink {
 public:
  InsnExpansion(const RangeExpander& expander, EventSink& next);

  void OnEvent(const TraceEvent& event) override;
  void OnEnd() override { next_.OnEnd(); }

  bool TakesParts() const override { return parted_ && parted_->TakesParts(); }
  std::unique_ptr<EventSink> NewPart() const override;
  std::unique_ptr<EventSink> NewFirstPart() const override;
  std::string Refusal(const EventSink& part) const override;
  void Fold(std::unique_ptr<EventSink> part) override;
  uint64_t PartBytes() const override { return parted_ ? parted_->PartBytes() : 0; }

 private:
  class Part;

  const RangeExpander& expander_;
  EventSink& next_;
  PartedSink* parted_;  // null: next_ takes one stream
};

}  // namespace ptprof::etm
