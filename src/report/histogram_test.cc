#include "src/report/histogram.h"

#include <algorithm>
#include <random>

#include <catch2/catch.hpp>

using namespace ptprof;

TEST_CASE("integer values get integer bins; a narrow range one bin per value") {
  Histogram h = MakeHistogram(std::vector<double>{22, 22, 24, 25, 31}, 20, BinScale::kLinear);
  REQUIRE(h.bins.size() == 10);  // 22..31, width 1
  CHECK(h.bins[0].low == 22);
  CHECK(h.bins[0].high == 23);
  CHECK(h.bins[0].count == 2);
  CHECK(h.bins[2].count == 1);
  CHECK(h.bins[9].count == 1);
  REQUIRE(h.distinct.size() == 4);
  CHECK(h.distinct[0] == std::make_pair(22.0, uint64_t{2}));

  Histogram wide = MakeHistogram(std::vector<double>{0, 100, 199}, 2, BinScale::kLinear);
  REQUIRE(wide.bins.size() == 2);
  CHECK(wide.bins[0].high == 100);
  CHECK(wide.bins[0].count == 1);
  CHECK(wide.bins[1].count == 2);
}

TEST_CASE("fractional values: N equal bins, the last one closed") {
  Histogram h = MakeHistogram(std::vector<double>{0.5, 1.5, 2.5}, 2, BinScale::kLinear);
  REQUIRE(h.bins.size() == 2);
  CHECK(h.bins[0].count == 1);
  CHECK(h.bins[1].count == 2);
  CHECK(h.bins[1].high == 2.5);
}

TEST_CASE("log2 bins are octaves, zero in [0, 1)") {
  Histogram h = MakeHistogram(std::vector<double>{0, 1, 3, 4, 1000}, 20, BinScale::kLog2);
  REQUIRE(h.bins.size() == 11);  // [0,1) [1,2) [2,4) ... [512,1024)
  CHECK(h.bins[0].count == 1);
  CHECK(h.bins[1].count == 1);
  CHECK(h.bins[2].count == 1);
  CHECK(h.bins[3].low == 4);
  CHECK(h.bins[3].count == 1);
  CHECK(h.bins[10].low == 512);
  CHECK(h.bins[10].count == 1);
  Histogram negative = MakeHistogram(std::vector<double>{-3, 0.5, 5}, 20, BinScale::kLog2);
  CHECK(negative.bins[0].low == -3);
  CHECK(negative.bins[0].count == 2);
}

TEST_CASE("nearest-rank percentiles") {
  std::vector<double> v;
  for (int i = 1; i <= 1000; ++i) v.push_back(i);
  Histogram h = MakeHistogram(v, 10, BinScale::kLinear);
  CHECK(h.percentiles.p50 == 500);
  CHECK(h.percentiles.p90 == 900);
  CHECK(h.percentiles.p99 == 990);
  CHECK(h.percentiles.p999 == 999);
  CHECK(h.percentiles.max == 1000);
  CHECK(h.percentiles.mean == 500.5);
  CHECK(h.distinct.empty());  // too many to list
  CHECK(Percentile(std::vector<double>{7}, 99.9) == 7);
  CHECK(MakeHistogram(ValueTally{}, 10, BinScale::kLinear).bins.empty());
}

TEST_CASE("percentiles, range and distinct values as the sorted values give them, counted or listed") {
  std::mt19937_64 random(42);
  for (int trial = 0; trial < 200; ++trial) {
    const size_t n = 1 + random() % 3000;
    const uint64_t spread = trial % 2 ? 50 : 100000;  // few distinct values, or many
    std::vector<double> values;
    for (size_t i = 0; i < n; ++i)
      values.push_back(static_cast<double>(random() % spread) * (trial % 3 ? 1.0 : 0.25) - 7);
    const BinScale scale = trial % 4 ? BinScale::kLinear : BinScale::kLog2;
    Histogram h = MakeHistogram(values, 10, scale);
    // The same from the values listed (as a tally keeps them when they hardly repeat).
    ValueTally listed(0);
    for (double v : values) listed.Add(v);
    REQUIRE(listed.listed());
    Histogram from_list = MakeHistogram(listed, 10, scale);
    CHECK(from_list.count == h.count);
    CHECK(from_list.percentiles.mean == h.percentiles.mean);
    CHECK(from_list.percentiles.p50 == h.percentiles.p50);
    CHECK(from_list.percentiles.p999 == h.percentiles.p999);
    CHECK(from_list.distinct == h.distinct);
    REQUIRE(from_list.bins.size() == h.bins.size());
    for (size_t b = 0; b < h.bins.size(); ++b) {
      CHECK(from_list.bins[b].low == h.bins[b].low);
      CHECK(from_list.bins[b].high == h.bins[b].high);
      CHECK(from_list.bins[b].count == h.bins[b].count);
    }
    std::vector<double> sorted = values;
    std::sort(sorted.begin(), sorted.end());
    INFO("trial " << trial << ", " << n << " values");
    CHECK(h.count == n);
    CHECK(h.percentiles.min == sorted.front());
    CHECK(h.percentiles.max == sorted.back());
    CHECK(h.percentiles.p50 == Percentile(sorted, 50));
    CHECK(h.percentiles.p90 == Percentile(sorted, 90));
    CHECK(h.percentiles.p99 == Percentile(sorted, 99));
    CHECK(h.percentiles.p999 == Percentile(sorted, 99.9));
    std::vector<std::pair<double, uint64_t>> distinct;
    for (double v : sorted) {
      if (distinct.empty() || distinct.back().first != v) distinct.push_back({v, 0});
      ++distinct.back().second;
    }
    if (distinct.size() > Histogram::kMaxDistinct) distinct.clear();
    CHECK(h.distinct == distinct);
    uint64_t binned = 0;
    for (const HistogramBin& bin : h.bins) binned += bin.count;
    CHECK(binned == n);
  }
}
