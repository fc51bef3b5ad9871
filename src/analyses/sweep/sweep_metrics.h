#pragma once
// SweepMetrics answers the grid-wide questions of a sweep: the temporal resolution factor of each
// row normalised over the grid, the lower and upper trace-size bounds of each workload, and the
// paper's Epsilon/Omega normalisation (the cost of one conditional branch per loop iteration).
// Definitions and formulas: docs/sweep.md.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "src/analyses/sweep/sweep_row.h"

namespace ptprof::sweep {

inline constexpr double kTrfScale = 100;  // the paper's N_f: TRF runs from 0 (best) to 100

// TRF = N_f * (p - min P) / (max P - min P), with p = median(dI) * median(dT) of the row and P the
// p of every successful row of the same workload and backend. Rows without p get none; when all p
// are equal, TRF is 0.
void ComputeTrf(std::vector<SweepRow>& rows);

// The overhead figures from the wall-clock runs (medians; spread from the extremes).
OverheadSample SummariseOverhead(std::vector<double> untraced, std::vector<double> traced);

struct SizeBounds {
  std::string workload;
  std::string backend;
  uint64_t min_bytes = 0, max_bytes = 0;
  std::string min_config, max_config;  // PacketConfig::Label() of the rows that reach them
  size_t rows = 0;
};
// Per workload and backend, over the successful rows.
std::vector<SizeBounds> TraceSizeBounds(const std::vector<SweepRow>& rows);

// Omega minus Epsilon under one configuration: what one more conditional branch per iteration
// costs. Overheads are percentage points (the paper's 11.78 - 3.10 = 8.68).
struct BranchCost {
  std::string backend;
  std::string config;
  uint64_t iterations = 0;
  double omega_bytes = 0, epsilon_bytes = 0;
  double bytes_per_iteration = 0;        // (omega - epsilon) / iterations
  double tnt_packets_per_iteration = 0;  // TNT packets (tnt.8 + tnt.64), same difference
  std::optional<double> omega_overhead, epsilon_overhead, normalised_overhead;
};
// For every configuration with a successful Omega and Epsilon row; `iterations` is the loop count
// both run.
std::vector<BranchCost> EpsilonOmega(const std::vector<SweepRow>& rows, uint64_t iterations);

}  // namespace ptprof::sweep
