#include "src/analyses/sweep/time_resolution.h"

#include <algorithm>
#include <variant>

namespace ptprof::sweep {

double LowerMedian(std::vector<double> values) {
  if (values.empty()) return 0;
  const size_t middle = (values.size() - 1) / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(middle),
                   values.end());
  return values[middle];
}

void TimeResolution::StartStream() {
  have_last_ = false;
  have_timed_ = false;
}

void TimeResolution::OnEvent(const TraceEvent& event) {
  const auto* block = std::get_if<ExecBlock>(&event.body);
  if (block == nullptr) return;
  ++blocks_;
  const uint64_t tsc = event.header.tsc;
  if (tsc != kUnknownTime) {
    // The first block with a time is a timed event too: it starts the first delta.
    const bool moved = !have_last_ || tsc != last_tsc_;
    if (moved) {
      ++timed_;
      if (have_timed_ && tsc > last_timed_tsc_) {
        delta_ns_.push_back(static_cast<double>(tsc - last_timed_tsc_) * ns_per_tick_);
        delta_insns_.push_back(static_cast<double>(insns_ - insns_at_last_timed_));
      }
      have_timed_ = true;
      last_timed_tsc_ = tsc;
      insns_at_last_timed_ = insns_;
    }
    have_last_ = true;
    last_tsc_ = tsc;
  }
  insns_ += block->insns;
}

ResolutionSummary TimeResolution::Summary() const {
  ResolutionSummary summary;
  summary.blocks = blocks_;
  summary.insns = insns_;
  summary.timed_events = timed_;
  summary.deltas = delta_ns_.size();
  summary.median_ns = LowerMedian(delta_ns_);
  summary.median_insns = LowerMedian(delta_insns_);
  return summary;
}

}  // namespace ptprof::sweep
