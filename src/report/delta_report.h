#pragma once
// DeltaReport answers "what does a delta profile say?" in the form the user reads: the pair, the
// counts (intervals, nested openers, dropped and unfinished intervals, pattern matches per
// alternative), an instruction-count and a time histogram with percentiles, and the K longest
// intervals with their stream, CPU/thread, times, trace offsets and the symbols where they opened
// and closed. It is written as text, JSON, or CSV (one row per interval).
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "src/analyses/delta/delta_profiler.h"
#include "src/report/histogram.h"

namespace ptprof {

struct DeltaReportOptions {
  std::string input;
  // The stream (or CPU/thread) an interval's lane belongs to ("" when unknown).
  std::function<std::string(int32_t lane)> lane_name;
  size_t bins = 20;
  BinScale scale = BinScale::kLinear;
  size_t top = 10;  // at most the profile's keeping.longest
  std::string time_unit = "ns";  // "ns" or "ticks" (TSC ticks when no frequency is known)
  std::function<std::string(uint64_t ip)> symbolize;  // "" when unknown
};

struct DeltaPatternSummary {
  std::string name, definition;
  std::vector<std::pair<std::string, uint64_t>> alternatives;  // text, matches
  uint64_t matches = 0;
};

struct ReportedInterval {
  delta::Interval interval;
  std::string stream, open_symbol, close_symbol;
};

struct DeltaReport {
  std::string input, time_unit;
  DeltaPatternSummary open, close;
  delta::DeltaCounts counts;
  Histogram instructions, time;
  std::vector<ReportedInterval> top;  // longest first
  // Every interval in closing order (for CSV), named as it is written, not held named: the
  // profile's intervals (the profiler outlives the report) and what names one.
  const std::deque<delta::Interval>* intervals = nullptr;
  std::function<ReportedInterval(const delta::Interval&)> named;
};

DeltaReport MakeDeltaReport(const delta::DeltaProfiler& profiler, const DeltaReportOptions& options);

void WriteDeltaText(std::FILE* out, const DeltaReport& report);
void WriteDeltaJson(std::FILE* out, const DeltaReport& report);
void WriteDeltaCsv(std::FILE* out, const DeltaReport& report);

}  // namespace ptprof
