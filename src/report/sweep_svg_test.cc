#include "src/report/sweep_svg.h"

#include <catch2/catch.hpp>

using namespace ptprof;

namespace {

sweep::SweepRow Row(const std::string& workload, uint64_t psb, uint64_t bytes) {
  sweep::SweepRow row;
  row.workload = workload;
  row.ok = true;
  row.config.psb_period = psb;
  row.trace_bytes = bytes;
  row.packets["psb"] = bytes / psb;
  row.trf = 100.0 * static_cast<double>(psb) / 4096;
  return row;
}

}  // namespace

TEST_CASE("a line plot has its title, log2 ticks, one line per series and a legend") {
  LinePlot plot{"Trace size", "PSB period", "bytes", true,
                {{"A", {{8, 1000}, {10, 500}, {12, 400}}}, {"B", {{8, 50}, {12, 40}}}}};
  std::string svg = LinePlotSvg(plot);
  CHECK(svg.find("<svg") != std::string::npos);
  CHECK(svg.find("Trace size") != std::string::npos);
  CHECK(svg.find(">2<tspan dy=\"-5\" font-size=\"9\">10</tspan>") != std::string::npos);
  size_t lines = 0;
  for (size_t at = svg.find("<polyline"); at != std::string::npos; at = svg.find("<polyline", at + 1))
    ++lines;
  CHECK(lines == 2);
  CHECK(svg.find(">B</text>") != std::string::npos);
  CHECK(LinePlotSvg({"empty", "x", "y", false, {}}).find("no data") != std::string::npos);
}

TEST_CASE("sweep plots: size, TRF and one per packet kind for each swept parameter") {
  std::vector<sweep::SweepRow> rows = {Row("A", 256, 1000), Row("A", 1024, 600),
                                       Row("A", 4096, 500)};
  sweep::PacketConfig base;  // psb 4096, the others off
  auto plots = SweepPlots(rows, base);
  REQUIRE(plots.size() == 3);
  CHECK(plots[0].file == "sweep_psb_size.svg");
  CHECK(plots[1].file == "sweep_psb_trf.svg");
  CHECK(plots[2].file == "sweep_psb_packets_psb.svg");
  rows.resize(1);  // one value: nothing to plot
  CHECK(SweepPlots(rows, base).empty());
}
