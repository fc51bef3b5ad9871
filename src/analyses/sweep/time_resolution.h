#pragma once
// TimeResolution answers "how finely does the decoded trace place its branches in time?": over
// the decoded blocks (each ends at a branch) it finds the timed events — blocks whose decoded time
// differs from the block before, i.e. where a timing packet (TSC, MTC, CYC) moved the clock — and
// the time and instruction deltas between consecutive ones. Their medians are the resolution the
// paper's temporal resolution factor is built from (docs/sweep.md).
#include <cstdint>
#include <vector>

#include "src/model/event_sink.h"

namespace ptprof::sweep {

struct ResolutionSummary {
  uint64_t blocks = 0;        // decoded blocks (branches)
  uint64_t insns = 0;         // decoded instructions
  uint64_t timed_events = 0;  // blocks where the decoded time moved
  uint64_t deltas = 0;        // pairs of consecutive timed events
  double median_ns = 0;       // median time between consecutive timed events
  double median_insns = 0;    // median instructions between them
  bool has_deltas() const { return deltas > 0; }
};

// The median as the paper takes it: the element at (n - 1) / 2 of the sorted values (the lower
// median for an even count). 0 for no values.
double LowerMedian(std::vector<double> values);

class TimeResolution : public EventSink {
 public:
  // `ns_per_tick`: nanoseconds per TSC tick (the emulated recorder's 2 GHz TSC: 0.5).
  explicit TimeResolution(double ns_per_tick) : ns_per_tick_(ns_per_tick) {}

  void OnEvent(const TraceEvent& event) override;
  // A new stream (thread) starts: deltas never span two streams.
  void StartStream();
  ResolutionSummary Summary() const;

 private:
  double ns_per_tick_;
  uint64_t blocks_ = 0, insns_ = 0, timed_ = 0;
  bool have_last_ = false;
  uint64_t last_tsc_ = 0;           // time of the last block
  uint64_t last_timed_tsc_ = 0;     // time of the last timed event
  uint64_t insns_at_last_timed_ = 0;
  bool have_timed_ = false;
  std::vector<double> delta_ns_, delta_insns_;
};

}  // namespace ptprof::sweep
