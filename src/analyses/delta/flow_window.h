#pragma once
// FlowWindow answers "which events show this part of the flow?" for `ptprof decode --interval`
// and `--around`: it passes on only the events of one delta interval (its lane, the instruction
// positions from its opener to its closer, counted the way DeltaProfiler counts them), or the
// `context` events before and after the first event at or past a trace offset or a time.
//
// It takes its stream in parts (src/model/parted_sink.h) without passing anything on from them: a
// part only counts its lane's instructions (an interval) or notes whether it holds the target and
// keeps its last `context` events (an offset or a time), and the fold refuses a part that holds
// any of the window's events, which the decoder then passes on to this sink in order. A window
// is a few events, so one or two parts are decoded twice.
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "src/model/parted_sink.h"

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

class FlowWindow : public PartedSink {
 public:
  FlowWindow(WindowSpec spec, EventSink& next) : spec_(std::move(spec)), next_(next) {}

  void OnEvent(const TraceEvent& event) override;
  // A batch is scanned; only the blocks that may show (and a part's last ones) are unpacked.
  void OnBlocks(const BlockBatch& batch) override;
  void OnEnd() override {
    if (!part_) next_.OnEnd();
  }

  std::unique_ptr<EventSink> NewPart() const override;
  std::string Refusal(const EventSink& part) const override;
  void Fold(std::unique_ptr<EventSink> part) override;

  // Whether any event was passed on (false: the window was not in the trace).
  bool found() const { return found_; }

 private:
  void OnIntervalEvent(const TraceEvent& event);
  // Whether an event of the lane with `insns` instructions, at position_, shows in the interval.
  bool Inside(uint64_t insns) const;
  bool AtTarget(const EventHeader& header) const;
  void Keep(const TraceEvent& event);

  WindowSpec spec_;
  EventSink& next_;
  bool found_ = false;
  uint64_t position_ = 0;            // kInterval: instructions of the lane so far
  std::deque<TraceEvent> before_;    // kOffset/kTime: the last `context` events
  size_t after_ = 0;                 // events still to pass after the target
  bool done_ = false;
  // A part's: its lane's instructions are position_ and its events counted (an interval);
  // whether it holds an event at or past the target (an offset, a time); its last `context`
  // events are in before_.
  bool part_ = false;
  uint64_t part_lane_events_ = 0;
  bool part_at_target_ = false;
};

}  // namespace ptprof::delta
