#include "src/analyses/sweep/sweep_metrics.h"

#include <catch2/catch.hpp>

using namespace ptprof::sweep;

namespace {

SweepRow Row(const std::string& workload, uint64_t psb, uint64_t bytes, double ns, double insns) {
  SweepRow row;
  row.workload = workload;
  row.backend = "qemu";
  row.config.psb_period = psb;
  row.ok = true;
  row.trace_bytes = bytes;
  row.has_resolution = true;
  row.resolution.deltas = ns > 0 ? 5 : 0;
  row.resolution.median_ns = ns;
  row.resolution.median_insns = insns;
  return row;
}

}  // namespace

TEST_CASE("TRF normalises p = median dI x median dT over each workload's rows") {
  std::vector<SweepRow> rows = {Row("A", 256, 900, 10, 20), Row("A", 1024, 500, 20, 40),
                                Row("A", 4096, 400, 40, 80), Row("B", 256, 50, 1, 1),
                                Row("B", 512, 40, 0, 0)};
  ComputeTrf(rows);
  // A: p = 200, 800, 3200 -> 0, 20, 100.
  REQUIRE(rows[0].trf);
  CHECK(*rows[0].trf == Approx(0));
  CHECK(*rows[1].trf == Approx(20));
  CHECK(*rows[2].trf == Approx(100));
  // B: one row with p (all equal: 0), one without deltas (no TRF).
  CHECK(*rows[3].trf == 0);
  CHECK(!rows[4].trf);
}

TEST_CASE("trace-size bounds per workload skip failed rows") {
  std::vector<SweepRow> rows = {Row("A", 256, 900, 1, 1), Row("A", 4096, 400, 1, 1),
                                Row("A", 8192, 10, 1, 1)};
  rows[2].ok = false;
  auto bounds = TraceSizeBounds(rows);
  REQUIRE(bounds.size() == 1);
  CHECK(bounds[0].min_bytes == 400);
  CHECK(bounds[0].max_bytes == 900);
  CHECK(bounds[0].min_config == "psb=4096,mtc=off,cyc=off,tsc=on");
  CHECK(bounds[0].rows == 2);
}

TEST_CASE("overhead from medians, spread from the extremes") {
  OverheadSample s = SummariseOverhead({1.0, 1.1, 0.9}, {1.2, 1.5, 1.3});
  CHECK(s.median_percent == Approx(30));
  CHECK(s.min_percent == Approx(100 * (1.2 / 1.1 - 1)));
  CHECK(s.max_percent == Approx(100 * (1.5 / 0.9 - 1)));
}

TEST_CASE("Epsilon/Omega: the cost of one conditional branch per iteration") {
  SweepRow omega = Row("Omega", 4096, 1000, 1, 1), epsilon = Row("Epsilon", 4096, 600, 1, 1);
  omega.packets["tnt.8"] = 300;
  epsilon.packets["tnt.8"] = 100;
  omega.overhead = SummariseOverhead({1.0}, {1.1178});
  epsilon.overhead = SummariseOverhead({1.0}, {1.031});
  auto costs = EpsilonOmega({omega, epsilon, Row("Omega", 256, 5, 1, 1)}, 100);
  REQUIRE(costs.size() == 1);  // the psb=256 Omega has no Epsilon to pair with
  CHECK(costs[0].bytes_per_iteration == Approx(4));
  CHECK(costs[0].tnt_packets_per_iteration == Approx(2));
  REQUIRE(costs[0].normalised_overhead);
  CHECK(*costs[0].normalised_overhead == Approx(8.68));
}
