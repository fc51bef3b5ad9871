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

constexpr double kRanks[] = {50.0, 90.0, 99.0, 99.9};

double* RankOut(Percentiles& p, size_t i) {
  double* out[] = {&p.p50, &p.p90, &p.p99, &p.p999};
  return out[i];
}

// The values' range, whether all are integers, and each distinct value with its count while
// there are at most kMaxDistinct of them.
struct Scan {
  double lo = 0, hi = 0;
  bool integers = true;
  std::vector<std::pair<double, uint64_t>> distinct;  // ascending; empty once there are more
};

Scan ScanList(std::span<const double> values) {
  Scan scan;
  scan.lo = scan.hi = values.front();
  bool too_many = false;
  for (double v : values) {
    scan.lo = std::min(scan.lo, v);
    scan.hi = std::max(scan.hi, v);
    if (v != std::floor(v)) scan.integers = false;
    if (too_many) continue;
    auto at = std::lower_bound(scan.distinct.begin(), scan.distinct.end(), v,
                               [](const auto& entry, double x) { return entry.first < x; });
    if (at != scan.distinct.end() && at->first == v) {
      ++at->second;
    } else if (scan.distinct.size() == Histogram::kMaxDistinct) {
      too_many = true;
      scan.distinct.clear();
    } else {
      scan.distinct.insert(at, {v, 1});
    }
  }
  return scan;
}

Scan ScanDistinct(std::span<const std::pair<double, uint64_t>> distinct) {
  Scan scan;
  scan.lo = distinct.front().first;
  scan.hi = distinct.back().first;
  for (const auto& [v, n] : distinct)
    if (v != std::floor(v)) scan.integers = false;
  if (distinct.size() <= Histogram::kMaxDistinct) scan.distinct.assign(distinct.begin(), distinct.end());
  return scan;
}

// `each(add)` calls add(value, count) for every value (or distinct value).
template <typename Each>
std::vector<HistogramBin> LinearBins(const Each& each, const Scan& scan, size_t count) {
  const double lo = scan.lo, hi = scan.hi;
  std::vector<HistogramBin> bins;
  if (scan.integers) {
    double span = hi - lo + 1;
    double width = std::ceil(span / static_cast<double>(count));
    size_t n = static_cast<size_t>(std::ceil(span / width));
    for (size_t i = 0; i < n; ++i)
      bins.push_back({lo + width * static_cast<double>(i), lo + width * static_cast<double>(i + 1), 0});
    each([&](double v, uint64_t times) {
      bins[std::min(n - 1, static_cast<size_t>((v - lo) / width))].count += times;
    });
    return bins;
  }
  double width = (hi - lo) / static_cast<double>(count);
  if (width <= 0) width = 1;
  for (size_t i = 0; i < count; ++i)
    bins.push_back({lo + width * static_cast<double>(i),
                    i + 1 == count ? hi : lo + width * static_cast<double>(i + 1), 0});
  each([&](double v, uint64_t times) {
    bins[std::min(count - 1, static_cast<size_t>((v - lo) / width))].count += times;
  });
  return bins;
}

int Octave(double v) { return v < 1 ? -1 : static_cast<int>(std::floor(std::log2(v))); }

template <typename Each>
std::vector<HistogramBin> Log2Bins(const Each& each, const Scan& scan) {
  int first = Octave(std::max(0.0, scan.lo)), last = Octave(std::max(0.0, scan.hi));
  std::vector<HistogramBin> bins;
  for (int k = first; k <= last; ++k)
    bins.push_back({k < 0 ? 0.0 : std::ldexp(1.0, k), std::ldexp(1.0, k + 1), 0});
  each([&](double v, uint64_t times) {
    bins[static_cast<size_t>(Octave(std::max(0.0, v)) - first)].count += times;
  });
  // Negative values (a time delta shorter than the trace's timing resolution) join the lowest bin.
  if (scan.lo < 0) bins.front().low = scan.lo;
  return bins;
}

template <typename Each>
void FillBins(Histogram& h, const Each& each, Scan& scan, size_t bins) {
  h.bins = h.scale == BinScale::kLog2 ? Log2Bins(each, scan)
                                      : LinearBins(each, scan, std::max<size_t>(1, bins));
  h.percentiles.min = scan.lo;
  h.percentiles.max = scan.hi;
  h.distinct = std::move(scan.distinct);
}

// The percentiles of listed values: each a selection (nth_element) in a copy, the ranks in
// ascending order so that each selects among what lies above the one before.
void SelectPercentiles(std::span<const double> values, Percentiles& p,
                       HugeVector<double>* scratch) {
  HugeVector<double> own;
  HugeVector<double>& copy = scratch ? *scratch : own;
  copy.assign(values.data(), values.size());
  size_t from = 0;
  for (size_t r = 0; r < std::size(kRanks); ++r) {
    const size_t index = RankIndex(copy.size(), kRanks[r]);
    std::nth_element(copy.begin() + static_cast<ptrdiff_t>(from),
                     copy.begin() + static_cast<ptrdiff_t>(index), copy.end());
    *RankOut(p, r) = copy[index];
    from = index;
  }
}

// The percentiles of counted values: a walk up the ascending distinct values.
void WalkPercentiles(std::span<const std::pair<double, uint64_t>> distinct, uint64_t count,
                     Percentiles& p) {
  size_t at = 0;
  uint64_t below = 0;  // values before distinct[at]
  for (size_t r = 0; r < std::size(kRanks); ++r) {
    const size_t index = RankIndex(count, kRanks[r]);
    while (below + distinct[at].second <= index) below += distinct[at++].second;
    *RankOut(p, r) = distinct[at].first;
  }
}

}  // namespace

double Percentile(std::span<const double> sorted, double p) {
  return sorted[RankIndex(sorted.size(), p)];
}

// Nothing here needs the values sorted. Counted values give everything from their distinct
// values, sorted (a few hundred on a frequent pair, against millions of values). Listed ones
// give the bins, range and distinct values in one pass, and each percentile by a selection.
Histogram MakeHistogram(const ValueTally& values, size_t bins, BinScale scale,
                        HugeVector<double>* scratch) {
  Histogram h;
  h.scale = scale;
  h.count = values.count();
  if (values.empty()) return h;
  h.percentiles.mean = values.sum() / static_cast<double>(values.count());
  if (values.listed()) {
    const std::span<const double> list = values.values();
    Scan scan = ScanList(list);
    FillBins(h, [&](auto&& add) { for (double v : list) add(v, 1); }, scan, bins);
    SelectPercentiles(list, h.percentiles, scratch);
    return h;
  }
  const std::vector<std::pair<double, uint64_t>> distinct = values.Distinct();
  Scan scan = ScanDistinct(distinct);
  FillBins(h, [&](auto&& add) { for (const auto& [v, n] : distinct) add(v, n); }, scan, bins);
  WalkPercentiles(distinct, values.count(), h.percentiles);
  return h;
}

Histogram MakeHistogram(std::span<const double> values, size_t bins, BinScale scale) {
  ValueTally tally;
  for (double v : values) tally.Add(v);
  return MakeHistogram(tally, bins, scale);
}

}  // namespace ptprof
