#include "src/report/histogram.h"

#include <algorithm>
#include <cmath>

#include "src/model/huge_allocator.h"

namespace ptprof {

double Percentile(std::span<const double> sorted, double p) {
  // A tolerance keeps 99.9% of 1000 at rank 999 despite binary fractions.
  double rank = std::ceil(p * static_cast<double>(sorted.size()) / 100.0 - 1e-9);
  size_t index = rank < 1 ? 0 : static_cast<size_t>(rank) - 1;
  return sorted[std::min(index, sorted.size() - 1)];
}

namespace {

bool AllIntegers(std::span<const double> values) {
  for (double v : values)
    if (v != std::floor(v)) return false;
  return true;
}

std::vector<HistogramBin> LinearBins(std::span<const double> sorted, size_t count) {
  const double lo = sorted.front(), hi = sorted.back();
  std::vector<HistogramBin> bins;
  if (AllIntegers(sorted)) {
    double span = hi - lo + 1;
    double width = std::ceil(span / static_cast<double>(count));
    size_t n = static_cast<size_t>(std::ceil(span / width));
    for (size_t i = 0; i < n; ++i)
      bins.push_back({lo + width * static_cast<double>(i), lo + width * static_cast<double>(i + 1), 0});
    for (double v : sorted) bins[std::min(n - 1, static_cast<size_t>((v - lo) / width))].count++;
    return bins;
  }
  double width = (hi - lo) / static_cast<double>(count);
  if (width <= 0) width = 1;
  for (size_t i = 0; i < count; ++i)
    bins.push_back({lo + width * static_cast<double>(i),
                    i + 1 == count ? hi : lo + width * static_cast<double>(i + 1), 0});
  for (double v : sorted)
    bins[std::min(count - 1, static_cast<size_t>((v - lo) / width))].count++;
  return bins;
}

int Octave(double v) { return v < 1 ? -1 : static_cast<int>(std::floor(std::log2(v))); }

std::vector<HistogramBin> Log2Bins(std::span<const double> sorted) {
  int first = Octave(std::max(0.0, sorted.front())), last = Octave(std::max(0.0, sorted.back()));
  std::vector<HistogramBin> bins;
  for (int k = first; k <= last; ++k)
    bins.push_back({k < 0 ? 0.0 : std::ldexp(1.0, k), std::ldexp(1.0, k + 1), 0});
  for (double v : sorted) bins[static_cast<size_t>(Octave(std::max(0.0, v)) - first)].count++;
  // Negative values (a time delta shorter than the trace's timing resolution) join the lowest bin.
  if (sorted.front() < 0) bins.front().low = sorted.front();
  return bins;
}

}  // namespace

Histogram MakeHistogram(std::span<const double> unsorted, size_t bins, BinScale scale) {
  Histogram h;
  h.scale = scale;
  h.count = unsorted.size();
  if (unsorted.empty()) return h;
  // A copy to sort, in huge pages when large (millions of intervals).
  std::vector<double, HugeAllocator<double>> values(unsorted.begin(), unsorted.end());
  std::sort(values.begin(), values.end());
  h.bins = scale == BinScale::kLog2 ? Log2Bins(values) : LinearBins(values, std::max<size_t>(1, bins));
  Percentiles& p = h.percentiles;
  p.min = values.front();
  p.max = values.back();
  p.p50 = Percentile(values, 50);
  p.p90 = Percentile(values, 90);
  p.p99 = Percentile(values, 99);
  p.p999 = Percentile(values, 99.9);
  double sum = 0;
  for (double v : values) sum += v;
  p.mean = sum / static_cast<double>(values.size());
  for (size_t i = 0; i < values.size();) {
    size_t j = i;
    while (j < values.size() && values[j] == values[i]) ++j;
    if (h.distinct.size() == Histogram::kMaxDistinct) {
      h.distinct.clear();
      break;
    }
    h.distinct.push_back({values[i], j - i});
    i = j;
  }
  return h;
}

}  // namespace ptprof
