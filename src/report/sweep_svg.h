#pragma once
// SweepSvg answers "how do trace size, packets and temporal resolution move with a packet
// period?" as pictures in the style of the paper's figures 5-7: one plot per swept parameter and
// quantity, the period on a log2 x axis, one line per workload, a legend. Self-contained SVG 1.1.
#include <string>
#include <utility>
#include <vector>

#include "src/analyses/sweep/sweep_grid.h"
#include "src/analyses/sweep/sweep_row.h"

namespace ptprof {

struct PlotSeries {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (log2 of the period, value), any order
};

struct LinePlot {
  std::string title;
  std::string x_label;  // ticks are written 2^k
  std::string y_label;
  bool log_y = false;   // log10 y axis (sizes and counts span decades across workloads)
  std::vector<PlotSeries> series;
};

std::string LinePlotSvg(const LinePlot& plot);

struct NamedSvg {
  std::string file;  // e.g. "sweep_psb_size.svg"
  std::string svg;
};

// The plots of a sweep: for each parameter swept with at least two numeric values (PSB, MTC,
// CYC), over the rows whose other parameters are at `baseline`: trace size, TRF, and the count of
// each packet kind that occurs. Failed rows and "off" values are left out.
std::vector<NamedSvg> SweepPlots(const std::vector<sweep::SweepRow>& rows,
                                 const sweep::PacketConfig& baseline);

}  // namespace ptprof
