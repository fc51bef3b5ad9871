#include "src/report/svg_plot.h"
#include "src/report/svg_text.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ptprof {

namespace {

constexpr double kWidth = 900, kPanelHeight = 330, kTop = 50;
constexpr double kLeft = 80, kRight = 30, kPlotTop = 40, kPlotBottom = 70;

std::string Num(double v) {
  char buf[40];
  double a = std::fabs(v);
  if (v == std::floor(v) && a < 1e7) std::snprintf(buf, sizeof buf, "%.0f", v);
  else if (a >= 1e7) std::snprintf(buf, sizeof buf, "%.3g", v);
  else std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

// A "nice" tick step (1, 2 or 5 times a power of ten) giving about `ticks` ticks up to `max`.
double NiceStep(double max, int ticks) {
  double raw = max / ticks;
  if (raw <= 1) return 1;
  double magnitude = std::pow(10, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * magnitude) return m * magnitude;
  return 10 * magnitude;
}

void Text(std::string& svg, double x, double y, const std::string& text, const char* anchor,
          int size = 12, const char* extra = "") {
  svg += "<text x=\"" + SvgCoord(x) + "\" y=\"" + SvgCoord(y) + "\" text-anchor=\"" + anchor +
         "\" font-size=\"" + std::to_string(size) + "\" " + extra + ">" + SvgEscape(text) + "</text>\n";
}

void Line(std::string& svg, double x1, double y1, double x2, double y2, const char* style) {
  svg += "<line x1=\"" + SvgCoord(x1) + "\" y1=\"" + SvgCoord(y1) + "\" x2=\"" + SvgCoord(x2) + "\" y2=\"" + SvgCoord(y2) +
         "\" " + style + "/>\n";
}

void Panel(std::string& svg, double top, const SvgPanel& panel) {
  const double x0 = kLeft, x1 = kWidth - kRight;
  const double y0 = top + kPanelHeight - kPlotBottom, y1 = top + kPlotTop;
  Text(svg, (x0 + x1) / 2, top + 22, panel.title, "middle", 15, "font-weight=\"bold\"");
  const Histogram& h = *panel.histogram;
  if (h.bins.empty()) {
    Text(svg, (x0 + x1) / 2, (y0 + y1) / 2, "no values", "middle", 14);
    return;
  }
  uint64_t most = 1;
  for (const HistogramBin& b : h.bins) most = std::max(most, b.count);
  const double step = NiceStep(static_cast<double>(most), 5);
  const double y_max = std::ceil(static_cast<double>(most) / step) * step;
  auto y_of = [&](double count) { return y0 - (y0 - y1) * count / y_max; };
  // Grid and y ticks.
  for (double v = 0; v <= y_max + 1e-9; v += step) {
    Line(svg, x0, y_of(v), x1, y_of(v), "stroke=\"#dddddd\" stroke-width=\"1\"");
    Text(svg, x0 - 6, y_of(v) + 4, Num(v), "end", 11);
  }
  // Bars.
  const size_t n = h.bins.size();
  const double bar = (x1 - x0) / static_cast<double>(n);
  for (size_t i = 0; i < n; ++i) {
    const HistogramBin& b = h.bins[i];
    double x = x0 + bar * static_cast<double>(i);
    double y = y_of(static_cast<double>(b.count));
    svg += "<rect x=\"" + SvgCoord(x + 1) + "\" y=\"" + SvgCoord(y) + "\" width=\"" + SvgCoord(std::max(1.0, bar - 2)) +
           "\" height=\"" + SvgCoord(y0 - y) + "\" fill=\"#4a7ab5\"><title>[" + Num(b.low) + ", " +
           Num(b.high) + "): " + std::to_string(b.count) + "</title></rect>\n";
    if (b.count)
      Text(svg, x + bar / 2, y - 4, std::to_string(b.count), "middle", n > 30 ? 8 : 10);
  }
  // X tick labels at bin edges, thinned so that they do not overlap.
  const size_t every = std::max<size_t>(1, static_cast<size_t>(std::ceil(static_cast<double>(n) * 70 / (x1 - x0))));
  for (size_t i = 0; i <= n; i += every) {
    double edge = i < n ? h.bins[i].low : h.bins[n - 1].high;
    double x = x0 + bar * static_cast<double>(i);
    Line(svg, x, y0, x, y0 + 5, "stroke=\"#000\"");
    Text(svg, x, y0 + 18, Num(edge), "middle", 11);
  }
  // Axes and labels.
  Line(svg, x0, y0, x1, y0, "stroke=\"#000\" stroke-width=\"1.5\"");
  Line(svg, x0, y0, x0, y1, "stroke=\"#000\" stroke-width=\"1.5\"");
  std::string x_label = panel.x_label + (h.scale == BinScale::kLog2 ? " (log2 bins)" : "");
  Text(svg, (x0 + x1) / 2, y0 + 42, x_label, "middle", 13);
  double ym = (y0 + y1) / 2;
  Text(svg, 22, ym, "intervals", "middle", 13,
       ("transform=\"rotate(-90 22 " + SvgCoord(ym) + ")\"").c_str());
  const Percentiles& p = h.percentiles;
  Text(svg, x1, top + 40, "n=" + std::to_string(h.count) + "  p50=" + Num(p.p50) + "  p99=" +
       Num(p.p99) + "  max=" + Num(p.max), "end", 11);
}

}  // namespace

std::string HistogramSvg(const std::string& title, const std::vector<SvgPanel>& panels) {
  const double height = kTop + kPanelHeight * static_cast<double>(panels.size()) + 10;
  std::string svg = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  svg += "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" + SvgCoord(kWidth) +
         "\" height=\"" + SvgCoord(height) + "\" viewBox=\"0 0 " + SvgCoord(kWidth) + " " + SvgCoord(height) +
         "\" font-family=\"DejaVu Sans, Arial, sans-serif\">\n";
  svg += "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
  Text(svg, kWidth / 2, 30, title, "middle", 17, "font-weight=\"bold\"");
  for (size_t i = 0; i < panels.size(); ++i)
    Panel(svg, kTop + kPanelHeight * static_cast<double>(i), panels[i]);
  svg += "</svg>\n";
  return svg;
}

}  // namespace ptprof
