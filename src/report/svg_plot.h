#pragma once
// HistogramSvg answers "what does this distribution look like?" as a picture: one panel per
// histogram, stacked, each with its title, bars, a y axis of counts with ticks and grid lines, and
// an x axis labelled with the bin edges and the unit. Self-contained SVG 1.1, no scripts.
#include <string>
#include <vector>

#include "src/report/histogram.h"

namespace ptprof {

struct SvgPanel {
  std::string title;    // e.g. "instruction-count delta"
  std::string x_label;  // e.g. "instructions"
  const Histogram* histogram = nullptr;
};

std::string HistogramSvg(const std::string& title, const std::vector<SvgPanel>& panels);

}  // namespace ptprof
