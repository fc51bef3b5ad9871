#include "src/report/delta_report.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>

#include <nlohmann/json.hpp>

#include "src/model/json_text.h"

namespace ptprof {

namespace {

DeltaPatternSummary Summarise(const patterns::Pattern& pattern, const std::vector<uint64_t>& counts) {
  DeltaPatternSummary s;
  s.name = pattern.name;
  s.definition = pattern.definition;
  for (size_t i = 0; i < pattern.alternatives.size(); ++i) {
    uint64_t n = i < counts.size() ? counts[i] : 0;
    s.alternatives.push_back({pattern.alternatives[i].text, n});
    s.matches += n;
  }
  return s;
}

std::string Hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64, v);
  return buf;
}

// Numbers as short as they can be: integers without a fraction.
std::string Num(double v) {
  char buf[40];
  if (v == std::floor(v) && std::fabs(v) < 1e15)
    std::snprintf(buf, sizeof buf, "%.0f", v);
  else
    std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

std::string Where(const std::string& symbol, uint64_t ip) {
  return symbol.empty() ? Hex(ip) : symbol + " (" + Hex(ip) + ")";
}

std::string CpuText(const delta::Interval& i) {
  if (i.cpu != kUnknownId) return "cpu " + std::to_string(i.cpu);
  if (i.tid != kUnknownId) return "tid " + std::to_string(i.tid);
  return "cpu -";
}

void WriteHistogramText(std::FILE* out, const char* title, const Histogram& h,
                        const std::string& unit) {
  std::fprintf(out, "\n%s (%s%s%s):\n", title, h.scale == BinScale::kLog2 ? "log2 bins" : "linear bins",
               unit.empty() ? "" : ", ", unit.c_str());
  if (h.count == 0) {
    std::fprintf(out, "  (no values)\n");
    return;
  }
  const Percentiles& p = h.percentiles;
  std::fprintf(out, "  min %s  p50 %s  p90 %s  p99 %s  p99.9 %s  max %s  mean %s\n",
               Num(p.min).c_str(), Num(p.p50).c_str(), Num(p.p90).c_str(), Num(p.p99).c_str(),
               Num(p.p999).c_str(), Num(p.max).c_str(), Num(p.mean).c_str());
  uint64_t most = 0;
  for (const HistogramBin& b : h.bins) most = std::max(most, b.count);
  for (size_t i = 0; i < h.bins.size(); ++i) {
    const HistogramBin& b = h.bins[i];
    bool last_inclusive = h.scale == BinScale::kLinear && i + 1 == h.bins.size() &&
                          b.high == h.percentiles.max;
    std::string range = "[" + Num(b.low) + ", " + Num(b.high) + (last_inclusive ? "]" : ")");
    int bar = most ? static_cast<int>(std::lround(40.0 * static_cast<double>(b.count) /
                                                  static_cast<double>(most)))
                   : 0;
    if (b.count && bar == 0) bar = 1;
    std::fprintf(out, "  %-26s %8" PRIu64 " %s\n", range.c_str(), b.count,
                 std::string(static_cast<size_t>(bar), '#').c_str());
  }
  if (!h.distinct.empty() && h.distinct.size() <= 16) {
    std::fprintf(out, "  exact values:");
    for (const auto& [value, count] : h.distinct)
      std::fprintf(out, " %s x%" PRIu64, Num(value).c_str(), count);
    std::fprintf(out, "\n");
  }
}

nlohmann::ordered_json HistogramJson(const Histogram& h) {
  nlohmann::ordered_json j;
  j["scale"] = h.scale == BinScale::kLog2 ? "log2" : "lin";
  j["count"] = h.count;
  if (h.count) {
    const Percentiles& p = h.percentiles;
    j["percentiles"] = {{"min", p.min}, {"p50", p.p50}, {"p90", p.p90}, {"p99", p.p99},
                        {"p99.9", p.p999}, {"max", p.max}, {"mean", p.mean}};
  }
  auto bins = nlohmann::ordered_json::array();
  for (const HistogramBin& b : h.bins) bins.push_back({{"low", b.low}, {"high", b.high}, {"count", b.count}});
  j["bins"] = std::move(bins);
  auto values = nlohmann::ordered_json::array();
  for (const auto& [value, count] : h.distinct) values.push_back({{"value", value}, {"count", count}});
  j["values"] = std::move(values);
  return j;
}

nlohmann::ordered_json PatternJson(const DeltaPatternSummary& s) {
  nlohmann::ordered_json j;
  j["name"] = s.name;
  j["definition"] = s.definition;
  j["matches"] = s.matches;
  auto alternatives = nlohmann::ordered_json::array();
  for (const auto& [text, n] : s.alternatives) alternatives.push_back({{"alternative", text}, {"matches", n}});
  j["alternatives"] = std::move(alternatives);
  return j;
}

nlohmann::ordered_json IntervalJson(const ReportedInterval& r) {
  const delta::Interval& i = r.interval;
  nlohmann::ordered_json j;
  j["id"] = i.id;
  j["stream"] = r.stream;
  if (i.cpu != kUnknownId) j["cpu"] = i.cpu;
  if (i.tid != kUnknownId) j["tid"] = i.tid;
  j["instructions"] = i.instructions();
  if (i.time()) j["time"] = *i.time();
  if (i.open_time) j["open_time"] = *i.open_time;
  if (i.close_time) j["close_time"] = *i.close_time;
  j["open_ip"] = Hex(i.open_ip);
  j["close_ip"] = Hex(i.close_ip);
  j["open_symbol"] = r.open_symbol;
  j["close_symbol"] = r.close_symbol;
  j["open_offset"] = Hex(i.open_offset);
  j["close_offset"] = Hex(i.close_offset);
  j["nested"] = i.nested;
  return j;
}

}  // namespace

DeltaReport MakeDeltaReport(const delta::DeltaProfiler& profiler, const DeltaReportOptions& options) {
  DeltaReport report;
  report.input = options.input;
  report.time_unit = options.time_unit;
  report.counts = profiler.counts();
  report.open = Summarise(profiler.open_pattern(), report.counts.matches[0]);
  report.close = Summarise(profiler.close_pattern(), report.counts.matches[1]);
  if (profiler.open_pattern().name == profiler.close_pattern().name) report.close = report.open;

  HugeVector<double> scratch;  // one copy's memory for both
  report.instructions =
      MakeHistogram(profiler.instruction_values(), options.bins, options.scale, &scratch);
  report.time = MakeHistogram(profiler.time_values(), options.bins, options.scale, &scratch);

  report.named = [lane_name = options.lane_name,
                  symbolize = options.symbolize](const delta::Interval& i) {
    ReportedInterval r;
    r.interval = i;
    if (lane_name) r.stream = lane_name(i.lane);
    if (symbolize) {
      r.open_symbol = symbolize(i.open_ip);
      r.close_symbol = symbolize(i.close_ip);
    }
    return r;
  };
  if (profiler.keeps_intervals()) report.intervals = &profiler.intervals();
  for (const delta::Interval& i : profiler.Longest()) {
    if (report.top.size() == options.top) break;
    report.top.push_back(report.named(i));
  }
  return report;
}

void WriteDeltaText(std::FILE* out, const DeltaReport& r) {
  const delta::DeltaCounts& c = r.counts;
  std::fprintf(out, "delta profile of %s\n", r.input.c_str());
  for (const DeltaPatternSummary* s : {&r.open, &r.close}) {
    std::fprintf(out, "%-6s %s = %s: %" PRIu64 " matches\n", s == &r.open ? "open" : "close",
                 s->name.c_str(), s->definition.c_str(), s->matches);
    if (s->alternatives.size() > 1)
      for (const auto& [text, n] : s->alternatives)
        std::fprintf(out, "         %-32s %" PRIu64 "\n", text.c_str(), n);
  }
  std::fprintf(out, "instructions decoded        %" PRIu64 "\n", c.instructions);
  if (c.unexpanded_instructions)
    std::fprintf(out, "  without code (not matched) %" PRIu64 "\n", c.unexpanded_instructions);
  std::fprintf(out, "intervals                   %" PRIu64 "\n", c.intervals);
  std::fprintf(out, "nested openers              %" PRIu64 "\n", c.nested_openers);
  std::fprintf(out, "dropped (crossed a gap)     %" PRIu64 "  (%" PRIu64 " gaps in the trace)\n",
               c.dropped_at_gap, c.gaps);
  std::fprintf(out, "open at the end             %" PRIu64 "\n", c.open_at_end);
  std::fprintf(out, "closers without an opener   %" PRIu64 "\n", c.closers_without_opener);
  if (c.intervals_without_time)
    std::fprintf(out, "intervals without time      %" PRIu64 "\n", c.intervals_without_time);
  WriteHistogramText(out, "instruction-count delta", r.instructions, "instructions");
  WriteHistogramText(out, "time delta", r.time, r.time_unit);
  if (!r.top.empty()) {
    std::fprintf(out, "\nlongest intervals:\n");
    std::fprintf(out, "  %6s %-10s %-9s %10s %12s  %-10s %-10s  %s\n", "id", "stream", "cpu/tid",
                 "insns", ("time/" + r.time_unit).c_str(), "open@", "close@", "opened at -> closed at");
    for (const ReportedInterval& t : r.top) {
      const delta::Interval& i = t.interval;
      std::fprintf(out, "  %6" PRIu64 " %-10s %-9s %10" PRIu64 " %12s  %-10s %-10s  %s -> %s\n", i.id,
                   t.stream.c_str(), CpuText(i).c_str(), i.instructions(),
                   i.time() ? Num(*i.time()).c_str() : "-", Hex(i.open_offset).c_str(),
                   Hex(i.close_offset).c_str(), Where(t.open_symbol, i.open_ip).c_str(),
                   Where(t.close_symbol, i.close_ip).c_str());
    }
    std::fprintf(out, "  (the flow of one: ptprof decode --interval ID --pair ... with the same input)\n");
  }
}

void WriteDeltaJson(std::FILE* out, const DeltaReport& r) {
  const delta::DeltaCounts& c = r.counts;
  nlohmann::ordered_json j;
  j["input"] = r.input;
  j["open"] = PatternJson(r.open);
  j["close"] = PatternJson(r.close);
  j["counts"] = {{"instructions", c.instructions},
                 {"unexpanded_instructions", c.unexpanded_instructions},
                 {"intervals", c.intervals},
                 {"nested_openers", c.nested_openers},
                 {"dropped_at_gap", c.dropped_at_gap},
                 {"gaps", c.gaps},
                 {"open_at_end", c.open_at_end},
                 {"closers_without_opener", c.closers_without_opener},
                 {"intervals_without_time", c.intervals_without_time}};
  j["time_unit"] = r.time_unit;
  j["instructions"] = HistogramJson(r.instructions);
  j["time"] = HistogramJson(r.time);
  auto top = nlohmann::ordered_json::array();
  for (const ReportedInterval& t : r.top) top.push_back(IntervalJson(t));
  j["top"] = std::move(top);
  std::fputs((j.dump() + "\n").c_str(), out);
}

void WriteDeltaCsv(std::FILE* out, const DeltaReport& r) {
  std::fprintf(out, "id,stream,cpu,tid,instructions,time_%s,open_time,close_time,open_ip,close_ip,"
               "open_offset,close_offset,nested,open_symbol,close_symbol\n", r.time_unit.c_str());
  if (!r.intervals) return;
  for (const delta::Interval& i : *r.intervals) {
    const ReportedInterval t = r.named(i);
    std::fprintf(out, "%" PRIu64 ",%s,%s,%s,%" PRIu64 ",%s,%s,%s,%s,%s,%s,%s,%u,%s,%s\n", i.id,
                 CsvQuoted(t.stream).c_str(), i.cpu == kUnknownId ? "" : std::to_string(i.cpu).c_str(),
                 i.tid == kUnknownId ? "" : std::to_string(i.tid).c_str(), i.instructions(),
                 i.time() ? Num(*i.time()).c_str() : "", i.open_time ? Num(*i.open_time).c_str() : "",
                 i.close_time ? Num(*i.close_time).c_str() : "", Hex(i.open_ip).c_str(),
                 Hex(i.close_ip).c_str(), Hex(i.open_offset).c_str(), Hex(i.close_offset).c_str(),
                 i.nested, CsvQuoted(t.open_symbol).c_str(), CsvQuoted(t.close_symbol).c_str());
  }
}

}  // namespace ptprof
