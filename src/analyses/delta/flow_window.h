#pragma once
// FlowWindow answers "which events show this part of the flow?" for `ptprof decode --interval`
// and `--around`: it passes on only the events of one delta interval (its lane, the instruction
// positions from its opener to its closer, counted the way DeltaProfiler counts them), or the
// `context` events before and after the first event at or past a trace offset or a time.
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>

#include "src/model/event_sink.h"

namespace ptprof::delta {

struct WindowSpec {
  enum class Kind { kInterval, kOffset, kTime };
  Kind kind = Kind::kOffset;
  // kInterval:
  int32_t lane = kUnknownId;
  bool per_thread = false;
  uint64_t first_position = 0, last_position = 0;
  // kOffset / kTime:
  uint64_t offset = 0;
  double time = 0;
  size_t context = 20;
  std::function<std::optional<double>(const EventHeader&)> time_of;  // kTime
};

class FlowWindow : public EventSink {
 public:
  FlowWindow(WindowSpec spec, EventSink& next) : spec_(std::move(spec)), next_(next) {}

  void OnEvent(const TraceEvent& event) override;
  void OnEnd() override { next_.OnEnd(); }

  // Whether any event was passed on (false: the window was not in the trace).
  bool found() const { return found_; }

 private:
  void OnIntervalEvent(const TraceEvent& event);
  bool AtTarget(const TraceEvent& event) const;

  WindowSpec spec_;
  EventSink& next_;
  bool found_ = false;
  uint64_t position_ = 0;            // kInterval: instructions of the lane so far
  std::deque<TraceEvent> before_;    // kOffset/kTime: the last `context` events
  size_t after_ = 0;                 // events still to pass after the target
  bool done_ = false;
};

}  // namespace ptprof::delta
