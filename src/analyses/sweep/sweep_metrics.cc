#include "src/analyses/sweep/sweep_metrics.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <map>
#include <utility>

namespace ptprof::sweep {

void ComputeTrf(std::vector<SweepRow>& rows) {
  std::map<std::pair<std::string, std::string>, std::pair<double, double>> range;
  for (const SweepRow& row : rows) {
    auto p = row.ResolutionProduct();
    if (!p) continue;
    auto key = std::make_pair(row.workload, row.backend);
    auto [it, fresh] = range.try_emplace(key, *p, *p);
    if (!fresh) {
      it->second.first = std::min(it->second.first, *p);
      it->second.second = std::max(it->second.second, *p);
    }
  }
  for (SweepRow& row : rows) {
    row.trf.reset();
    auto p = row.ResolutionProduct();
    if (!p) continue;
    auto [lo, hi] = range.at({row.workload, row.backend});
    row.trf = hi > lo ? kTrfScale * (*p - lo) / (hi - lo) : 0.0;
  }
}

OverheadSample SummariseOverhead(std::vector<double> untraced, std::vector<double> traced) {
  OverheadSample sample;
  sample.untraced_seconds = untraced;
  sample.traced_seconds = traced;
  if (untraced.empty() || traced.empty()) return sample;
  std::sort(untraced.begin(), untraced.end());
  std::sort(traced.begin(), traced.end());
  const double base = LowerMedian(untraced);
  const double with = LowerMedian(traced);
  auto percent = [](double t, double u) { return u > 0 ? 100.0 * (t / u - 1.0) : 0.0; };
  sample.median_percent = percent(with, base);
  sample.min_percent = percent(traced.front(), untraced.back());
  sample.max_percent = percent(traced.back(), untraced.front());
  return sample;
}

std::vector<SizeBounds> TraceSizeBounds(const std::vector<SweepRow>& rows) {
  std::vector<SizeBounds> bounds;
  for (const SweepRow& row : rows) {
    if (!row.ok) continue;
    auto it = std::find_if(bounds.begin(), bounds.end(), [&](const SizeBounds& b) {
      return b.workload == row.workload && b.backend == row.backend;
    });
    if (it == bounds.end()) {
      bounds.push_back({row.workload, row.backend, row.trace_bytes, row.trace_bytes,
                        row.config.Label(), row.config.Label(), 1});
      continue;
    }
    ++it->rows;
    if (row.trace_bytes < it->min_bytes) {
      it->min_bytes = row.trace_bytes;
      it->min_config = row.config.Label();
    }
    if (row.trace_bytes > it->max_bytes) {
      it->max_bytes = row.trace_bytes;
      it->max_config = row.config.Label();
    }
  }
  return bounds;
}

namespace {

uint64_t TntPackets(const SweepRow& row) {
  uint64_t n = 0;
  for (const auto& [kind, count] : row.packets)
    if (kind.rfind("tnt", 0) == 0) n += count;
  return n;
}

bool IsNamed(const SweepRow& row, const char* name) {
  std::string lower;
  for (char c : row.workload) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower == name;
}

}  // namespace

std::vector<BranchCost> EpsilonOmega(const std::vector<SweepRow>& rows, uint64_t iterations) {
  std::vector<BranchCost> costs;
  if (iterations == 0) return costs;
  for (const SweepRow& omega : rows) {
    if (!omega.ok || !IsNamed(omega, "omega")) continue;
    for (const SweepRow& epsilon : rows) {
      if (!epsilon.ok || !IsNamed(epsilon, "epsilon") || epsilon.backend != omega.backend ||
          !(epsilon.config == omega.config))
        continue;
      BranchCost cost;
      cost.backend = omega.backend;
      cost.config = omega.config.Label();
      cost.iterations = iterations;
      cost.omega_bytes = static_cast<double>(omega.trace_bytes);
      cost.epsilon_bytes = static_cast<double>(epsilon.trace_bytes);
      const double n = static_cast<double>(iterations);
      cost.bytes_per_iteration = (cost.omega_bytes - cost.epsilon_bytes) / n;
      cost.tnt_packets_per_iteration =
          (static_cast<double>(TntPackets(omega)) - static_cast<double>(TntPackets(epsilon))) / n;
      if (omega.overhead && epsilon.overhead) {
        cost.omega_overhead = omega.overhead->median_percent;
        cost.epsilon_overhead = epsilon.overhead->median_percent;
        cost.normalised_overhead = *cost.omega_overhead - *cost.epsilon_overhead;
      }
      costs.push_back(cost);
      break;
    }
  }
  return costs;
}

}  // namespace ptprof::sweep
