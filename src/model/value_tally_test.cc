#include "src/model/value_tally.h"

#include <algorithm>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

namespace ptprof {
namespace {

using Pairs = std::vector<std::pair<double, uint64_t>>;

TEST_CASE("a tally counts each distinct value and sums them") {
  ValueTally tally{3, 5, 3, 0.5, 3, -2};
  CHECK(tally.count() == 6);
  CHECK_FALSE(tally.listed());
  CHECK(tally.sum() == 12.5);
  CHECK(tally.Distinct() == Pairs{{-2, 1}, {0.5, 1}, {3, 3}, {5, 1}});
  CHECK(ValueTally{}.empty());
  CHECK(ValueTally{}.sum() == 0);
  CHECK(ValueTally{}.Distinct().empty());
}

TEST_CASE("zero and minus zero are one value") {
  ValueTally tally{0.0, -0.0, 1};
  CHECK(tally.Distinct() == Pairs{{0.0, 2}, {1, 1}});
}

TEST_CASE("a tally grows as distinct values come, and equal tallies compare equal") {
  ValueTally one, other;
  for (int round = 0; round < 3; ++round)
    for (int v = 0; v < 5000; ++v) one.Add(v);
  for (int v = 0; v < 5000; ++v)
    for (int round = 0; round < 3; ++round) other.Add(v);
  CHECK_FALSE(one.listed());
  CHECK(one.count() == 15000);
  const Pairs distinct = one.Distinct();
  REQUIRE(distinct.size() == 5000);
  CHECK(distinct.front() == std::pair<double, uint64_t>{0, 3});
  CHECK(distinct.back() == std::pair<double, uint64_t>{4999, 3});
  CHECK(one == other);
  CHECK(one.sum() == 3.0 * 4999 * 5000 / 2);
  other.Add(7);
  CHECK_FALSE(one == other);
}

TEST_CASE("values that hardly repeat are listed instead, past the table's floor") {
  ValueTally tally(4096);  // 256 slots at most, whatever the values
  ValueTally counted;
  for (int v = 0; v < 1000; ++v) {
    tally.Add(v * 0.25);
    counted.Add(v * 0.25);
  }
  CHECK(tally.listed());
  CHECK_FALSE(counted.listed());
  CHECK(tally.values().size() == 1000);
  CHECK(tally.Distinct() == counted.Distinct());
  CHECK(tally == counted);
  CHECK(tally.sum() == counted.sum());
  CHECK(ValueTally(0).listed());
}

TEST_CASE("values that repeat stay counted past the floor") {
  ValueTally tally(4096);
  for (int v = 0; v < 300; ++v)
    for (int times = 0; times < 10; ++times) tally.Add(v);
  CHECK_FALSE(tally.listed());
  // Past the floor, the choice is made as the table grows: 300 values seen once each there
  // would take a fifth of the table's bytes.
  ValueTally once(4096);
  for (int v = 0; v < 300; ++v) once.Add(v);
  CHECK(once.listed());
}

TEST_CASE("tallies taken in parts and merged are the tally taken in one") {
  std::mt19937_64 random(11);
  std::uniform_real_distribution<double> any(-1e3, 1e7);
  std::vector<double> values;
  for (int i = 0; i < 20000; ++i)
    values.push_back(i % 3 ? static_cast<double>(random() % 400) : any(random) / 7);
  ValueTally whole;
  for (double v : values) whole.Add(v);
  for (size_t floor : {ValueTally::kTableFloor, size_t{4096}, size_t{0}}) {
    INFO("table floor " << floor);
    ValueTally merged(floor);
    for (size_t from = 0; from < values.size(); from += 3000) {
      ValueTally part(floor);
      for (size_t i = from; i < std::min(values.size(), from + 3000); ++i) part.Add(values[i]);
      merged.Merge(part);
    }
    CHECK(merged.count() == whole.count());
    CHECK(merged == whole);
    CHECK(merged.sum() == whole.sum());  // to the bit: the sum is exact
  }
}

}  // namespace
}  // namespace ptprof
