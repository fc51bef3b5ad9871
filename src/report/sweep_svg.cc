#include "src/report/sweep_svg.h"
#include "src/report/svg_text.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <optional>
#include <set>

namespace ptprof {

namespace {

constexpr double kWidth = 900, kHeight = 440;
constexpr double kLeft = 90, kRight = 200, kTop = 50, kBottom = 60;
constexpr const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                   "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
                                   "#000000", "#aec7e8"};

// A y tick label: 1.5k, 20M, 0.25, 100.
std::string Short(double v) {
  char buf[32];
  const double a = std::fabs(v);
  if (a >= 1e9) std::snprintf(buf, sizeof buf, "%gG", v / 1e9);
  else if (a >= 1e6) std::snprintf(buf, sizeof buf, "%gM", v / 1e6);
  else if (a >= 1e3) std::snprintf(buf, sizeof buf, "%gk", v / 1e3);
  else std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

void Text(std::string& svg, double x, double y, const std::string& text, const char* anchor,
          int size = 12, const std::string& extra = "") {
  svg += "<text x=\"" + SvgCoord(x) + "\" y=\"" + SvgCoord(y) + "\" text-anchor=\"" + anchor +
         "\" font-size=\"" + std::to_string(size) + "\" " + extra + ">" + SvgEscape(text) +
         "</text>\n";
}

void Line(std::string& svg, double x1, double y1, double x2, double y2, const std::string& style) {
  svg += "<line x1=\"" + SvgCoord(x1) + "\" y1=\"" + SvgCoord(y1) + "\" x2=\"" + SvgCoord(x2) + "\" y2=\"" + SvgCoord(y2) +
         "\" " + style + "/>\n";
}

double NiceStep(double span, int ticks) {
  double raw = span / ticks;
  if (raw <= 0) return 1;
  double magnitude = std::pow(10, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * magnitude) return m * magnitude;
  return 10 * magnitude;
}

}  // namespace

std::string LinePlotSvg(const LinePlot& plot) {
  double x_min = std::numeric_limits<double>::max(), x_max = std::numeric_limits<double>::lowest();
  double y_min = std::numeric_limits<double>::max(), y_max = std::numeric_limits<double>::lowest();
  for (const PlotSeries& s : plot.series)
    for (auto [x, y] : s.points) {
      if (plot.log_y && y <= 0) continue;
      x_min = std::min(x_min, x);
      x_max = std::max(x_max, x);
      y_min = std::min(y_min, y);
      y_max = std::max(y_max, y);
    }
  std::string svg = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
                    "width=\"" + SvgCoord(kWidth) + "\" height=\"" + SvgCoord(kHeight) + "\" viewBox=\"0 0 " +
                    SvgCoord(kWidth) + " " + SvgCoord(kHeight) + "\" font-family=\"sans-serif\">\n";
  svg += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  Text(svg, kWidth / 2, 28, plot.title, "middle", 16, "font-weight=\"bold\"");
  const double px0 = kLeft, px1 = kWidth - kRight, py0 = kHeight - kBottom, py1 = kTop;
  if (x_min > x_max) {
    Text(svg, (px0 + px1) / 2, (py0 + py1) / 2, "no data", "middle", 14);
    return svg + "</svg>\n";
  }
  // Axes ranges: whole powers of two on x; decades (log) or nice steps (linear) on y.
  x_min = std::floor(x_min);
  x_max = std::ceil(x_max);
  if (x_max == x_min) {
    x_min -= 1;
    x_max += 1;
  }
  double lo, hi;
  if (plot.log_y) {
    lo = std::floor(std::log10(y_min));
    hi = std::ceil(std::log10(y_max));
    if (hi == lo) hi = lo + 1;
  } else {
    lo = std::min(0.0, y_min);
    double step = NiceStep(y_max - lo, 5);
    hi = std::max(lo + step, std::ceil(y_max / step) * step);
  }
  auto X = [&](double x) { return px0 + (x - x_min) / (x_max - x_min) * (px1 - px0); };
  auto Y = [&](double y) {
    double v = plot.log_y ? std::log10(y) : y;
    return py0 - (v - lo) / (hi - lo) * (py0 - py1);
  };
  const std::string grid = "stroke=\"#dddddd\" stroke-width=\"1\"";
  const std::string axis = "stroke=\"black\" stroke-width=\"1\"";
  // y ticks and grid
  if (plot.log_y) {
    for (double d = lo; d <= hi + 1e-9; d += 1) {
      double y = py0 - (d - lo) / (hi - lo) * (py0 - py1);
      Line(svg, px0, y, px1, y, grid);
      Text(svg, px0 - 6, y + 4, Short(std::pow(10, d)), "end");
      if (hi - lo <= 4 && d < hi)
        for (int m = 2; m <= 9; ++m) {
          double ym = Y(m * std::pow(10, d));
          Line(svg, px0 - 3, ym, px0, ym, axis);
        }
    }
  } else {
    double step = NiceStep(hi - lo, 5);
    for (double v = lo; v <= hi + step * 1e-9; v += step) {
      Line(svg, px0, Y(v), px1, Y(v), grid);
      Text(svg, px0 - 6, Y(v) + 4, Short(v), "end");
    }
  }
  // x ticks: every power of two (every other one when crowded)
  const int x_step = (x_max - x_min) > 16 ? 2 : 1;
  for (double k = x_min; k <= x_max + 1e-9; k += x_step) {
    Line(svg, X(k), py0, X(k), py1, grid);
    Line(svg, X(k), py0, X(k), py0 + 5, axis);
    svg += "<text x=\"" + SvgCoord(X(k)) + "\" y=\"" + SvgCoord(py0 + 20) +
           "\" text-anchor=\"middle\" font-size=\"12\">2<tspan dy=\"-5\" font-size=\"9\">" +
           std::to_string(static_cast<long long>(k)) + "</tspan></text>\n";
  }
  Line(svg, px0, py0, px1, py0, axis);
  Line(svg, px0, py0, px0, py1, axis);
  Text(svg, (px0 + px1) / 2, kHeight - 14, plot.x_label, "middle", 13);
  svg += "<text x=\"18\" y=\"" + SvgCoord((py0 + py1) / 2) + "\" text-anchor=\"middle\" font-size=\"13\" "
         "transform=\"rotate(-90 18 " + SvgCoord((py0 + py1) / 2) + ")\">" + SvgEscape(plot.y_label) +
         "</text>\n";
  // series and legend
  for (size_t i = 0; i < plot.series.size(); ++i) {
    const PlotSeries& s = plot.series[i];
    const std::string color = kColors[i % (sizeof kColors / sizeof kColors[0])];
    std::vector<std::pair<double, double>> points;
    for (auto p : s.points)
      if (!plot.log_y || p.second > 0) points.push_back(p);
    std::sort(points.begin(), points.end());
    if (points.size() > 1) {
      svg += "<polyline fill=\"none\" stroke=\"" + color + "\" stroke-width=\"2\" points=\"";
      for (auto [x, y] : points) svg += SvgCoord(X(x)) + "," + SvgCoord(Y(y)) + " ";
      svg += "\"/>\n";
    }
    for (auto [x, y] : points)
      svg += "<circle cx=\"" + SvgCoord(X(x)) + "\" cy=\"" + SvgCoord(Y(y)) + "\" r=\"3\" fill=\"" + color +
             "\"/>\n";
    const double ly = kTop + 10 + 20.0 * static_cast<double>(i);
    Line(svg, px1 + 15, ly, px1 + 40, ly, "stroke=\"" + color + "\" stroke-width=\"2\"");
    svg += "<circle cx=\"" + SvgCoord(px1 + 27.5) + "\" cy=\"" + SvgCoord(ly) + "\" r=\"3\" fill=\"" + color +
           "\"/>\n";
    Text(svg, px1 + 46, ly + 4, s.name, "start", 12);
  }
  return svg + "</svg>\n";
}

namespace {

// The swept parameter's value as a log2 x coordinate: log2 of the PSB period in bytes, the MTC
// and CYC exponents as they are (an MTC every 2^N ticks, a CYC after 2^(N-1) cycles).
std::optional<double> AxisValue(sweep::SweepAxis axis, const sweep::PacketConfig& c) {
  switch (axis) {
    case sweep::SweepAxis::kPsb: return std::log2(static_cast<double>(c.psb_period));
    case sweep::SweepAxis::kMtc:
      if (c.mtc_period) return static_cast<double>(*c.mtc_period);
      return std::nullopt;
    case sweep::SweepAxis::kCyc:
      if (c.cyc_threshold && *c.cyc_threshold > 0) return static_cast<double>(*c.cyc_threshold - 1);
      return std::nullopt;
    default: return std::nullopt;
  }
}

// Whether `c` differs from `base` only in the parameter of `axis`.
bool OnAxis(sweep::SweepAxis axis, const sweep::PacketConfig& c, const sweep::PacketConfig& base) {
  sweep::PacketConfig probe = c;
  if (axis == sweep::SweepAxis::kPsb) probe.psb_period = base.psb_period;
  if (axis == sweep::SweepAxis::kMtc) probe.mtc_period = base.mtc_period;
  if (axis == sweep::SweepAxis::kCyc) probe.cyc_threshold = base.cyc_threshold;
  return probe == base;
}

const char* AxisTitle(sweep::SweepAxis axis) {
  switch (axis) {
    case sweep::SweepAxis::kPsb: return "PSB period (bytes between PSB+)";
    case sweep::SweepAxis::kMtc: return "MTC period (crystal-clock ticks between MTC)";
    case sweep::SweepAxis::kCyc: return "CYC threshold (cycles before a CYC)";
    default: return "";
  }
}

}  // namespace

std::vector<NamedSvg> SweepPlots(const std::vector<sweep::SweepRow>& rows,
                                 const sweep::PacketConfig& baseline) {
  std::vector<NamedSvg> plots;
  for (sweep::SweepAxis axis :
       {sweep::SweepAxis::kPsb, sweep::SweepAxis::kMtc, sweep::SweepAxis::kCyc}) {
    std::vector<const sweep::SweepRow*> on_axis;
    std::set<double> xs;
    for (const sweep::SweepRow& row : rows) {
      if (!row.ok || !OnAxis(axis, row.config, baseline)) continue;
      auto x = AxisValue(axis, row.config);
      if (!x) continue;
      on_axis.push_back(&row);
      xs.insert(*x);
    }
    if (xs.size() < 2) continue;
    const std::string name = sweep::SweepAxisName(axis);
    // One series per workload (and backend, when a sweep has several), in first-seen order.
    auto series_of = [&](auto value) {
      std::vector<PlotSeries> series;
      for (const sweep::SweepRow* row : on_axis) {
        auto v = value(*row);
        if (!v) continue;
        std::string label = row->workload;
        auto it = std::find_if(series.begin(), series.end(),
                               [&](const PlotSeries& s) { return s.name == label; });
        if (it == series.end()) {
          series.push_back({label, {}});
          it = series.end() - 1;
        }
        it->points.emplace_back(*AxisValue(axis, row->config), *v);
      }
      return series;
    };
    const std::string others = " (others: " + baseline.Label() + ")";
    LinePlot size{"Trace size against the " + name + " period" + others, AxisTitle(axis),
                  "trace size (bytes)", true, {}};
    size.series = series_of([](const sweep::SweepRow& r) -> std::optional<double> {
      return static_cast<double>(r.trace_bytes);
    });
    plots.push_back({"sweep_" + name + "_size.svg", LinePlotSvg(size)});
    LinePlot trf{"Temporal resolution factor against the " + name + " period (lower is better)",
                 AxisTitle(axis), "TRF (0-100, normalised over the grid)", false, {}};
    trf.series = series_of([](const sweep::SweepRow& r) { return r.trf; });
    plots.push_back({"sweep_" + name + "_trf.svg", LinePlotSvg(trf)});
    std::set<std::string> kinds;
    for (const sweep::SweepRow* row : on_axis)
      for (const auto& [kind, count] : row->packets)
        if (count > 0) kinds.insert(kind);
    for (const std::string& kind : kinds) {
      LinePlot packets{kind + " packets against the " + name + " period", AxisTitle(axis),
                       kind + " packets", true, {}};
      packets.series = series_of([&kind](const sweep::SweepRow& r) -> std::optional<double> {
        auto it = r.packets.find(kind);
        return static_cast<double>(it == r.packets.end() ? 0 : it->second);
      });
      std::string file_kind = kind;
      std::replace(file_kind.begin(), file_kind.end(), '.', '_');
      plots.push_back({"sweep_" + name + "_packets_" + file_kind + ".svg", LinePlotSvg(packets)});
    }
  }
  return plots;
}

}  // namespace ptprof
