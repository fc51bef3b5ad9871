#include "src/analyses/delta/flow_window.h"

#include "src/analyses/delta/delta_profiler.h"

namespace ptprof::delta {

void FlowWindow::OnIntervalEvent(const TraceEvent& event) {
  if (DeltaProfiler::LaneId(event.header, spec_.per_thread) != spec_.lane) return;
  uint64_t insns = 0;
  if (const auto* block = std::get_if<ExecBlock>(&event.body)) insns = block->insns;
  else if (std::holds_alternative<Instruction>(event.body)) insns = 1;
  const uint64_t first = position_, end = position_ + insns;  // [first, end)
  position_ = end;
  const bool inside = insns ? first <= spec_.last_position && end > spec_.first_position
                            : first > spec_.first_position && first <= spec_.last_position;
  if (!inside) return;
  found_ = true;
  next_.OnEvent(event);
}

bool FlowWindow::AtTarget(const TraceEvent& event) const {
  if (spec_.kind == WindowSpec::Kind::kOffset) return event.header.offset >= spec_.offset;
  auto time = spec_.time_of ? spec_.time_of(event.header) : std::nullopt;
  return time && *time >= spec_.time;
}

void FlowWindow::OnEvent(const TraceEvent& event) {
  if (spec_.kind == WindowSpec::Kind::kInterval) {
    OnIntervalEvent(event);
    return;
  }
  if (done_) return;
  if (found_) {
    next_.OnEvent(event);
    if (--after_ == 0) done_ = true;
    return;
  }
  if (!AtTarget(event)) {
    before_.push_back(event);
    if (before_.size() > spec_.context) before_.pop_front();
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
