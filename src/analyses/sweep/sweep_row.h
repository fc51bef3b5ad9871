#pragma once
// SweepRow answers "what did one workload do under one packet configuration?": trace size, packet
// mix, bandwidth, decoded time resolution and (on backends where it is real) runtime overhead.
// The grid-wide figures (TRF, trace-size bounds, the Epsilon/Omega normalisation) are computed
// over the rows by sweep_metrics.h.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "src/analyses/sweep/sweep_grid.h"
#include "src/analyses/sweep/time_resolution.h"

namespace ptprof::sweep {

// Wall-clock runs of the workload with and without the tracer (backends with real overhead).
struct OverheadSample {
  std::vector<double> untraced_seconds;
  std::vector<double> traced_seconds;
  // 100 * (traced / untraced - 1) from the medians; the spread pairs the fastest and slowest runs.
  double median_percent = 0;
  double min_percent = 0;  // fastest traced run against the slowest untraced run
  double max_percent = 0;  // slowest traced run against the fastest untraced run
};

struct SweepRow {
  std::string workload;
  std::string backend;
  SweepAxis axis = SweepAxis::kPoint;
  PacketConfig config;
  bool ok = false;
  std::string error;  // why the row failed (ok == false)

  uint64_t trace_bytes = 0;
  uint64_t insns = 0;            // instructions traced
  double traced_seconds = 0;     // emulated: the cycle model's time; else the median traced run
  bool seconds_emulated = false;
  std::map<std::string, uint64_t> packets;  // by ptdump's packet names
  bool has_packets = false;
  ResolutionSummary resolution;
  bool has_resolution = false;
  std::optional<double> trf;     // filled by ComputeTrf; none without timed-event deltas
  std::optional<OverheadSample> overhead;  // none: not measured (emulated backend)
  std::vector<std::string> trace_files;    // where the traces were written (-o DIR)

  double BytesPerInsn() const {
    return insns ? static_cast<double>(trace_bytes) / static_cast<double>(insns) : 0;
  }
  double BytesPerSecond() const {
    return traced_seconds > 0 ? static_cast<double>(trace_bytes) / traced_seconds : 0;
  }
  // The paper's p: median instruction delta times median time delta (ns) between timed events.
  std::optional<double> ResolutionProduct() const {
    if (!ok || !has_resolution || !resolution.has_deltas()) return std::nullopt;
    return resolution.median_insns * resolution.median_ns;
  }
};

}  // namespace ptprof::sweep
