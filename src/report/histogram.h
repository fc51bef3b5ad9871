#pragma once
// Histogram answers "how are these values distributed?": bins on a linear or log2 scale and the
// percentiles a latency report shows (p50, p90, p99, p99.9, max), plus the exact distinct values
// when there are few of them. Integer-valued data gets integer bin edges, so that a value never
// straddles two bins and a narrow range gets one bin per value.
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "src/model/huge_vector.h"
#include "src/model/value_tally.h"

namespace ptprof {

enum class BinScale { kLinear, kLog2 };

struct HistogramBin {
  double low = 0;   // inclusive
  double high = 0;  // exclusive, except for the last bin of a linear histogram (inclusive)
  uint64_t count = 0;
};

struct Percentiles {
  double min = 0, p50 = 0, p90 = 0, p99 = 0, p999 = 0, max = 0, mean = 0;
};

struct Histogram {
  BinScale scale = BinScale::kLinear;
  std::vector<HistogramBin> bins;
  Percentiles percentiles;
  uint64_t count = 0;
  // (value, count) for every distinct value, ascending, when there are at most kMaxDistinct;
  // empty otherwise.
  std::vector<std::pair<double, uint64_t>> distinct;
  static constexpr size_t kMaxDistinct = 64;
};

// `bins` applies to the linear scale (at least 1); log2 bins are the octaves [2^k, 2^(k+1))
// from the smallest value's to the largest's, with [0, 1) for zero (and below: the first bin then
// starts at the smallest value). No values: no bins. The mean is the tally's sum (in the order
// the values came) over their count.
// `scratch`, when given, holds the copy the percentiles of listed values (ValueTally::listed) are
// selected in: a caller making several histograms of millions of values passes the same one,
// whose memory is then faulted in once.
Histogram MakeHistogram(const ValueTally& values, size_t bins, BinScale scale,
                        HugeVector<double>* scratch = nullptr);
// The same of `values` tallied in their order.
Histogram MakeHistogram(std::span<const double> values, size_t bins, BinScale scale);

// The nearest-rank percentile `p` (0 < p <= 100) of sorted `values` (not empty).
double Percentile(std::span<const double> sorted, double p);

}  // namespace ptprof
