#pragma once
// FlowSelection answers "which events belong to the section `ptprof stacks` was asked about?": it
// passes on only the events of one thread (--tid) and/or of one range of the trace (--interval
// FROM..TO, trace offsets, or times in the unit `ptprof delta` reports), and counts what it let
// through so that an empty selection can be reported instead of an empty tree. Events without a
// time of their own take the last time seen on their CPU.
//
// It takes its stream in parts when the sink after it does. With a time range, a part leaves out
// the events of a CPU that come before its first event with a time there (their time is one from
// before the part); the fold refuses the part when the time the stream had reached on that CPU
// was inside the range, and the part is then decoded again in order.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "src/model/parted_sink.h"
#include "src/model/result.h"

namespace ptprof::stackdiff {

struct FlowRange {
  enum class Kind { kOffset, kTime };
  Kind kind = Kind::kOffset;
  double from = 0, to = 0;  // inclusive; offsets as exact integers below 2^53
  std::string text;         // as the user wrote it, for messages
};

// "0x1000..0x2000", "4096..8192" (trace offsets) or "1500ns..2500ns" (times). Errors say what is
// expected.
Result<FlowRange> ParseFlowRange(const std::string& text);

struct FlowSelectionSpec {
  std::optional<int32_t> tid;
  std::optional<FlowRange> range;
  std::function<std::optional<double>(const EventHeader&)> time_of;  // for a time range
};

class FlowSelection : public PartedSink {
 public:
  FlowSelection(FlowSelectionSpec spec, EventSink& next) : spec_(std::move(spec)), next_(next) {}

  void OnEvent(const TraceEvent& event) override;
  // A batch is one thread's: passed on whole when that thread is wanted and no range cuts it
  // (none, or an offset range holding every block of it), else block by block.
  void OnBlocks(const BlockBatch& batch) override;
  void OnEnd() override { next_.OnEnd(); }

  std::unique_ptr<EventSink> NewPart() const override;
  std::unique_ptr<EventSink> NewFirstPart() const override;
  std::string Refusal(const EventSink& part) const override;
  void Fold(std::unique_ptr<EventSink> part) override;
  bool TakesParts() const override;

  uint64_t events_seen() const { return seen_; }
  uint64_t events_passed() const { return passed_; }
  uint64_t blocks_passed() const { return blocks_; }

 private:
  // Whether the event is in the range; `undecided` when its time is one from before this part.
  bool InRange(const EventHeader& header, bool& undecided);
  bool TimeInRange(double time) const;
  // A part: this selection's spec before a part of the next sink, which it owns.
  std::unique_ptr<EventSink> MakePart(std::unique_ptr<EventSink> next) const;
  PartedSink* NextInParts() const { return dynamic_cast<PartedSink*>(&next_); }

  FlowSelectionSpec spec_;
  EventSink& next_;
  std::map<int32_t, double> last_time_;  // per CPU
  std::map<int32_t, uint64_t> left_out_;  // a part's: events left out as undecided, per CPU
  uint64_t seen_ = 0, passed_ = 0, blocks_ = 0;
  std::unique_ptr<EventSink> owned_next_;  // a part's
};

}  // namespace ptprof::stackdiff
