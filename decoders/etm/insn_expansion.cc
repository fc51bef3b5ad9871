#include "decoders/etm/insn_expansion.h"

#include <utility>

namespace ptprof::etm {

namespace {

void ExpandInto(const RangeExpander& expander, const TraceEvent& event, EventSink& to) {
  if (std::holds_alternative<ExecBlock>(event.body))
    expander.Expand(event, [&to](const TraceEvent& insn) { to.OnEvent(insn); });
  else
    to.OnEvent(event);
}

}  // namespace

// Expands its blocks into a part of next_, which it owns until the fold.
class InsnExpansion::Part : public EventSink {
 public:
  Part(const RangeExpander& expander, std::unique_ptr<EventSink> next)
      : expander_(expander), next(std::move(next)) {}
  void OnEvent(const TraceEvent& event) override { ExpandInto(expander_, event, *next); }
  void OnEnd() override { next->OnEnd(); }  // the part's end (PartedSink::NewPart)

  const RangeExpander& expander_;
  std::unique_ptr<EventSink> next;
};

InsnExpansion::InsnExpansion(const RangeExpander& expander, EventSink& next)
    : expander_(expander), next_(next), parted_(dynamic_cast<PartedSink*>(&next)) {}

void InsnExpansion::OnEvent(const TraceEvent& event) { ExpandInto(expander_, event, next_); }

std::unique_ptr<EventSink> InsnExpansion::NewPart() const {
  return std::make_unique<Part>(expander_, parted_->NewPart());
}

std::unique_ptr<EventSink> InsnExpansion::NewFirstPart() const {
  return std::make_unique<Part>(expander_, parted_->NewFirstPart());
}

std::string InsnExpansion::Refusal(const EventSink& part) const {
  return parted_->Refusal(*static_cast<const Part&>(part).next);
}

void InsnExpansion::Fold(std::unique_ptr<EventSink> part) {
  parted_->Fold(std::move(static_cast<Part&>(*part).next));
}

}  // namespace ptprof::etm
