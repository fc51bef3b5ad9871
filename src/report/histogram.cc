#include "src/report/histogram.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace ptprof {

namespace {

// The 0-based index of the nearest-rank percentile `p` among `count` sorted values (count > 0).
size_t RankIndex(size_t count, double p) {
  // A tolerance keeps 99.9% of 1000 at rank 999 despite binary fractions.
  double rank = std::ceil(p * static_cast<double>(count) / 100.0 - 1e-9);
  size_t index = rank < 1 ? 0 : static_cast<size_t>(rank) - 1;
  return std::min(index, count - 1);
}

// What one pass over the values finds: their range, sum, whether all are integers, and each
// distinct value with its count while there are at most kMaxDistinct of them.
struct Scan {
  double lo = 0, hi = 0, sum = 0;
  bool integers = true;
  std::vector<std::pair<double, uint64_t>> distinct;  // ascending; empty once there are more
  bool too_many = false;
};

Scan ScanValues(std::span<const double> values) {
  Scan scan;
  scan.lo = scan.hi = values.front();
  for (double v : values) {
    scan.lo = std::min(scan.lo, v);
    scan.hi = std::max(scan.hi, v);
    scan.sum += v;
    if (v != std::floor(v)) scan.integers = false;
    if (scan.too_many) continue;
    auto at = std::lower_bound(scan.distinct.begin(), scan.distinct.end(), v,
                               [](const auto& entry, double x) { return entry.first < x; });
    if (at != scan.distinct.end() && at->first == v) {
      ++at->second;
    } else if (scan.distinct.size() == Histogram::kMaxDistinct) {
      scan.too_many = true;
      scan.distinct.clear();
    } else {
      scan.distinct.insert(at, {v, 1});
    }
  }
  return scan;
}

std::vector<HistogramBin> LinearBins(std::span<const double> values, const Scan& scan,
                                     size_t count) {
  const double lo = scan.lo, hi = scan.hi;
  std::vector<HistogramBin> bins;
  if (scan.integers) {
    double span = hi - lo + 1;
    double width = std::ceil(span / static_cast<double>(count));
    size_t n = static_cast<size_t>(std::ceil(span / width));
    for (size_t i = 0; i < n; ++i)
      bins.push_back({lo + width * static_cast<double>(i), lo + width * static_cast<double>(i + 1), 0});
    for (double v : values) bins[std::min(n - 1, static_cast<size_t>((v - lo) / width))].count++;
    return bins;
  }
  double width = (hi - lo) / static_cast<double>(count);
  if (width <= 0) width = 1;
  for (size_t i = 0; i < count; ++i)
    bins.push_back({lo + width * static_cast<double>(i),
                    i + 1 == count ? hi : lo + width * static_cast<double>(i + 1), 0});
  for (double v : values)
    bins[std::min(count - 1, static_cast<size_t>((v - lo) / width))].count++;
  return bins;
}

int Octave(double v) { return v < 1 ? -1 : static_cast<int>(std::floor(std::log2(v))); }

std::vector<HistogramBin> Log2Bins(std::span<const double> values, const Scan& scan) {
  int first = Octave(std::max(0.0, scan.lo)), last = Octave(std::max(0.0, scan.hi));
  std::vector<HistogramBin> bins;
  for (int k = first; k <= last; ++k)
    bins.push_back({k < 0 ? 0.0 : std::ldexp(1.0, k), std::ldexp(1.0, k + 1), 0});
  for (double v : values) bins[static_cast<size_t>(Octave(std::max(0.0, v)) - first)].count++;
  // Negative values (a time delta shorter than the trace's timing resolution) join the lowest bin.
  if (scan.lo < 0) bins.front().low = scan.lo;
  return bins;
}

}  // namespace

double Percentile(std::span<const double> sorted, double p) {
  return sorted[RankIndex(sorted.size(), p)];
}

// Nothing here needs the values sorted: the bins, range, mean and distinct values come from one
// pass, and each percentile is a selection (nth_element) in a copy, the ranks in ascending order
// so that each selects among what lies above the one before. On a frequent pair's millions of
// intervals, sorting the copy was the report's largest cost.
Histogram MakeHistogram(std::span<const double> values, size_t bins, BinScale scale,
                        HugeVector<double>* scratch) {
  Histogram h;
  h.scale = scale;
  h.count = values.size();
  if (values.empty()) return h;
  Scan scan = ScanValues(values);
  h.bins = scale == BinScale::kLog2 ? Log2Bins(values, scan)
                                    : LinearBins(values, scan, std::max<size_t>(1, bins));
  Percentiles& p = h.percentiles;
  p.min = scan.lo;
  p.max = scan.hi;
  p.mean = scan.sum / static_cast<double>(values.size());
  h.distinct = std::move(scan.distinct);
  // A copy to select in, in huge pages when large (millions of intervals).
  HugeVector<double> own;
  HugeVector<double>& copy = scratch ? *scratch : own;
  copy.assign(values.data(), values.size());
  size_t from = 0;
  for (auto [rank, out] : {std::pair{50.0, &p.p50}, std::pair{90.0, &p.p90},
                           std::pair{99.0, &p.p99}, std::pair{99.9, &p.p999}}) {
    const size_t index = RankIndex(copy.size(), rank);
    std::nth_element(copy.begin() + static_cast<ptrdiff_t>(from),
                     copy.begin() + static_cast<ptrdiff_t>(index), copy.end());
    *out = copy[index];
    from = index;
  }
  return h;
}

}  // namespace ptprof
