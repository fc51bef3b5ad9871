#include "src/analyses/delta/flow_window.h"

#include "src/analyses/delta/delta_profiler.h"

#include <algorithm>
#include <span>

#include "src/model/block_batch.h"

namespace ptprof::delta {

namespace {

uint64_t InsnsOf(const TraceEvent& event) {
  if (const auto* block = std::get_if<ExecBlock>(&event.body)) return block->insns;
  return std::holds_alternative<Instruction>(event.body) ? 1 : 0;
}

}  // namespace

bool FlowWindow::Inside(uint64_t insns) const {
  const uint64_t first = position_, end = position_ + insns;  // [first, end)
  return insns ? first <= spec_.last_position && end > spec_.first_position
               : first > spec_.first_position && first <= spec_.last_position;
}

void FlowWindow::OnIntervalEvent(const TraceEvent& event) {
  if (DeltaProfiler::LaneId(event.header, spec_.per_thread) != spec_.lane) return;
  const uint64_t insns = InsnsOf(event);
  const bool inside = Inside(insns);
  position_ += insns;
  if (part_) {
    ++part_lane_events_;
    return;
  }
  if (!inside) return;
  found_ = true;
  next_.OnEvent(event);
}

bool FlowWindow::AtTarget(const EventHeader& header) const {
  if (spec_.kind == WindowSpec::Kind::kOffset) return header.offset >= spec_.offset;
  auto time = spec_.time_of ? spec_.time_of(header) : std::nullopt;
  return time && *time >= spec_.time;
}

void FlowWindow::Keep(const TraceEvent& event) {
  before_.push_back(event);
  if (before_.size() > spec_.context) before_.pop_front();
}

void FlowWindow::OnBlocks(const BlockBatch& batch) {
  const std::span<const PackedEvent> blocks = batch.blocks;
  TraceEvent event;
  if (spec_.kind == WindowSpec::Kind::kInterval) {
    if (DeltaProfiler::LaneId(batch.Header(), spec_.per_thread) != spec_.lane) return;
    // Only the blocks inside the interval are unpacked (a part's none).
    if (part_) part_lane_events_ += blocks.size();
    for (size_t i = 0; i < blocks.size(); ++i) {
      if (part_ || !Inside(blocks[i].insns)) {
        position_ += blocks[i].insns;
        continue;
      }
      batch.Unpack(i, event);
      OnIntervalEvent(event);  // (moves position_ on)
    }
    return;
  }
  if (done_) return;
  // The first block at or past the target (after it: every block, until the context is done).
  size_t target = found_ ? 0 : blocks.size();
  for (size_t i = 0; i < blocks.size() && target == blocks.size(); ++i)
    if (AtTarget(batch.HeaderOf(i))) target = i;
  if (part_) {
    part_at_target_ = part_at_target_ || target < blocks.size();
    target = blocks.size();  // a part keeps its last events whatever they are
  }
  // Of the blocks before it, only the last `context` can show.
  for (size_t i = target - std::min(target, spec_.context); i < target; ++i) {
    batch.Unpack(i, event);
    Keep(event);
  }
  for (size_t i = target; i < blocks.size() && !done_; ++i) {
    batch.Unpack(i, event);
    OnEvent(event);
  }
}

std::unique_ptr<EventSink> FlowWindow::NewPart() const {
  struct Nothing : EventSink {
    void OnEvent(const TraceEvent&) override {}
  };
  static Nothing nothing;  // a part passes nothing on
  auto part = std::make_unique<FlowWindow>(spec_, nothing);
  part->part_ = true;
  return part;
}

std::string FlowWindow::Refusal(const EventSink& part_sink) const {
  const auto& part = static_cast<const FlowWindow&>(part_sink);
  if (spec_.kind == WindowSpec::Kind::kInterval) {
    // The lane's positions in the part run from position_ to position_ + its instructions.
    if (part.part_lane_events_ && position_ <= spec_.last_position &&
        position_ + part.position_ >= spec_.first_position)
      return "the window's interval lies in it";
    return {};
  }
  if (done_) return {};
  if (found_) return "the window's events after its target go on in it";
  if (part.part_at_target_) return "the window's target lies in it";
  return {};
}

void FlowWindow::Fold(std::unique_ptr<EventSink> part_sink) {
  auto& part = static_cast<FlowWindow&>(*part_sink);
  if (spec_.kind == WindowSpec::Kind::kInterval) {
    position_ += part.position_;
    return;
  }
  if (found_) return;  // (done: a part after the window)
  for (const TraceEvent& event : part.before_) Keep(event);
}

void FlowWindow::OnEvent(const TraceEvent& event) {
  if (spec_.kind == WindowSpec::Kind::kInterval) {
    OnIntervalEvent(event);
    return;
  }
  if (part_) {
    part_at_target_ = part_at_target_ || AtTarget(event.header);
    Keep(event);
    return;
  }
  if (done_) return;
  if (found_) {
    next_.OnEvent(event);
    if (--after_ == 0) done_ = true;
    return;
  }
  if (!AtTarget(event.header)) {
    Keep(event);
    return;
  }
  found_ = true;
  for (const TraceEvent& earlier : before_) next_.OnEvent(earlier);
  before_.clear();
  next_.OnEvent(event);
  after_ = spec_.context;
  if (after_ == 0) done_ = true;
}

}  // namespace ptprof::delta
