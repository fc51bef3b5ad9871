#pragma once
// StitchedStream is the one stream a parallel decode builds out of its segments: it passes events
// on to the real sink in order and counts them the way FlowSummary does. For a sequential decode
// of the rest of a trace from inside it (Restart), the first `skip` events are dropped.
#include <cstddef>
#include <cstdint>
#include <variant>

#include "decoders/pt/flow_session.h"

namespace ptprof::pt {

class StitchedStream : public EventSink {
 public:
  explicit StitchedStream(EventSink& next) : next_(next) {}
  void Restart(size_t skip) { skip_ = skip; }
  void OnEvent(const TraceEvent& event) override {
    if (skip_) {
      --skip_;
      return;
    }
    Pass(event);
  }
  // An event already at its offset in the whole trace.
  void Pass(const TraceEvent& event) {
    if (const auto* block = std::get_if<ExecBlock>(&event.body)) {
      blocks += 1;
      insns += block->insns;
    } else if (std::holds_alternative<Instruction>(event.body)) {
      insns += 1;
    } else if (std::holds_alternative<TraceGap>(event.body)) {
      gaps += 1;
    }
    next_.OnEvent(event);
  }
  uint64_t blocks = 0, insns = 0, gaps = 0;

 private:
  EventSink& next_;
  size_t skip_ = 0;
};

}  // namespace ptprof::pt
