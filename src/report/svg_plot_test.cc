#include "src/report/svg_plot.h"

#include <catch2/catch.hpp>

using namespace ptprof;

namespace {
size_t Count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}
}  // namespace

TEST_CASE("the plot has a panel per histogram with bars, axes and labels") {
  Histogram insns = MakeHistogram(std::vector<double>{22, 22, 202, 2002}, 4, BinScale::kLinear);
  Histogram time = MakeHistogram(ValueTally{}, 4, BinScale::kLinear);
  std::string svg = HistogramSvg("a <title>", {{"instruction-count delta", "instructions", &insns},
                                               {"time delta", "time (ns)", &time}});
  CHECK(svg.rfind("<?xml", 0) == 0);
  CHECK(svg.find("</svg>") != std::string::npos);
  CHECK(svg.find("a &lt;title&gt;") != std::string::npos);
  CHECK(Count(svg, "<rect x=") == insns.bins.size());
  CHECK(svg.find("instruction-count delta") != std::string::npos);
  CHECK(svg.find(">instructions</text>") != std::string::npos);
  CHECK(svg.find(">time (ns)") == std::string::npos);  // an empty panel says so instead
  CHECK(svg.find(">no values</text>") != std::string::npos);
  CHECK(svg.find("rotate(-90") != std::string::npos);  // the y label
  CHECK(svg.find(">22</text>") != std::string::npos);   // an x tick at the first edge
}
