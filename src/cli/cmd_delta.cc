// ptprof delta: delta profiling (docs/delta.md). Intervals between a match of one instruction
// pattern and the next match of another (superCLI -> superSTI: interrupts off), per CPU or per
// thread, as instruction-count and time histograms with percentiles, counts and the longest
// intervals, in text, JSON or CSV, and optionally as an SVG plot.
#include <cinttypes>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "src/cli/command.h"
#include "src/cli/delta_run.h"
#include "src/cli/delta_perf_etm.h"
#include "src/cli/delta_snapshot.h"
#include "src/cli/input_options.h"
#include "src/report/delta_report.h"
#include "src/pipeline/input_kind.h"
#include "src/report/svg_plot.h"

namespace ptprof::cli {

namespace {

struct DeltaCommandOptions {
  std::string input;
  InputOptions in;
  PairOptions pair;
  size_t bins = 20;
  std::string scale = "lin";
  size_t top = 10;
  std::string format = "text";
  std::string svg;
  bool verbose = false;
};

int UsageError(const std::string& message) {
  std::fprintf(stderr, "ptprof: delta: %s\n", message.c_str());
  return kExitUsage;
}

// When the pair gave no interval, says why in one line (nullopt: there are intervals).
std::optional<std::string> WhyNoIntervals(const DeltaReport& r) {
  if (r.counts.intervals) return std::nullopt;
  const std::string decoded = std::to_string(r.counts.instructions) + " instructions decoded";
  if (r.open.matches == 0 && r.close.matches == 0)
    return "neither " + r.open.name + " nor " + r.close.name + " matched (" + decoded +
           "): no intervals";
  if (r.open.matches == 0)
    return r.open.name + " never matched (" + decoded + ", " + r.close.name + " " +
           std::to_string(r.close.matches) + " times): no intervals";
  if (r.close.matches == 0 && r.open.name != r.close.name)
    return r.close.name + " never matched (" + decoded + ", " + r.open.name + " " +
           std::to_string(r.open.matches) + " times): no intervals";
  return "no interval closed (" + decoded + "; " + std::to_string(r.counts.dropped_at_gap) +
         " dropped at gaps, " + std::to_string(r.counts.open_at_end) + " open at the end, " +
         std::to_string(r.counts.closers_without_opener) + " closers without an opener)";
}

// What the report needs kept of the intervals: every one for CSV rows, else the --top longest.
delta::IntervalKeeping Keeping(const DeltaCommandOptions& options) {
  return {options.format == "csv", options.top};
}

// Writes the report of a finished profile; `symbolize` and `lane_name` may be empty.
int Report(const DeltaCommandOptions& options, const delta::DeltaProfiler& profiler,
           const std::string& time_unit, std::function<std::string(uint64_t)> symbolize,
           std::function<std::string(int32_t)> lane_name) {
  DeltaReportOptions report_options;
  report_options.input = options.input;
  report_options.bins = options.bins;
  report_options.scale = options.scale == "log2" ? BinScale::kLog2 : BinScale::kLinear;
  report_options.top = options.top;
  report_options.time_unit = time_unit;
  report_options.symbolize = std::move(symbolize);
  report_options.lane_name = std::move(lane_name);
  DeltaReport report = MakeDeltaReport(profiler, report_options);

  if (auto why = WhyNoIntervals(report)) {
    std::fprintf(stderr, "ptprof: delta: %s: %s\n", options.input.c_str(), why->c_str());
    return kExitBadInput;
  }
  if (options.format == "json")
    WriteDeltaJson(stdout, report);
  else if (options.format == "csv")
    WriteDeltaCsv(stdout, report);
  else
    WriteDeltaText(stdout, report);

  if (!options.svg.empty()) {
    std::string title = "delta " + report.open.name + " -> " + report.close.name + ": " +
                        std::to_string(report.counts.intervals) + " intervals";
    std::string svg = HistogramSvg(
        title, {{"instruction-count delta", "instructions between the matches", &report.instructions},
                {"time delta", "time between the matches (" + report.time_unit + ")", &report.time}});
    std::FILE* f = std::fopen(options.svg.c_str(), "w");
    if (!f || std::fwrite(svg.data(), 1, svg.size(), f) != svg.size() || std::fclose(f) != 0)
      return ReportBadInput(options.svg + ": cannot write the SVG");
  }
  return kExitOk;
}

// The report of a CoreSight profile, its lanes named by trace source (snapshot) or AUX stream.
int ReportEtm(const DeltaCommandOptions& options, const SnapshotDelta& s) {
  return Report(options, *s.run.profiler, s.run.clock.unit, {}, [&s](int32_t lane) {
    for (size_t i = 0; i < s.source_cpus.size(); ++i)
      if (s.source_cpus[i] == lane) return s.source_names[i];
    return std::string();
  });
}

// A CoreSight snapshot directory: decoders/etm instead of a PT session.
int RunOnSnapshot(const DeltaCommandOptions& options,
                  const std::pair<patterns::Pattern, patterns::Pattern>& pair) {
  if (options.in.AnyGiven())
    return UsageError("a CoreSight snapshot carries its own code and configuration: "
                      "no image or PT options");
  auto snapshot = RunDeltaOnSnapshot(options.input, options.in.streams, pair,
                                     options.pair.per_thread, Keeping(options));
  if (!snapshot) return ReportBadInput(options.input + ": " + snapshot.error().message);
  if (options.verbose)
    for (const std::string& note : snapshot->run.decode_notes)
      std::fprintf(stderr, "ptprof: %s\n", note.c_str());
  return ReportEtm(options, *snapshot);
}

int RunDeltaCommand(const DeltaCommandOptions& options) {
  if (options.bins == 0) return UsageError("--bins must be at least 1");
  auto pair = ResolvePair(options.pair);
  if (!pair) return UsageError(pair.error().message);
  if (auto kind = ClassifyPath(options.input); kind && *kind == InputKind::kCoreSightSnapshot)
    return RunOnSnapshot(options, *pair);
  else if (kind && (*kind == InputKind::kPerfData || *kind == InputKind::kPerfDataPipe))
    if (auto etm = RunDeltaOnPerfEtm({options.input, "text", options.in.streams, false, options.in.symfs,
                                      options.in.buildid_dir},
                                     *pair, options.pair.per_thread, Keeping(options)))  // cs_etm
      return *etm ? ReportEtm(options, **etm) : etm->error();
  auto raw = options.in.ToRawInput();
  if (!raw) return UsageError(raw.error().message);
  auto session = OpenSession(options.input, *raw, options.in.AnyGiven());
  if (!session) return ReportBadInput(session.error().message);
  for (const std::string& warning : session->warnings)
    std::fprintf(stderr, "ptprof: warning: %s\n", warning.c_str());
  auto selected = SelectStreams(*session, options.in.streams);
  if (!selected) return ReportBadInput(selected.error().message);

  auto run = RunDelta(*session, *selected, *pair, options.pair.per_thread, options.input,
                      Keeping(options));
  if (!run) return ReportBadInput(run.error().message);
  if (options.verbose)
    for (const std::string& note : run->decode_notes)
      std::fprintf(stderr, "ptprof: %s\n", note.c_str());

  const Session& opened = *session;
  const bool per_thread = options.pair.per_thread;
  auto lane_name = [&opened, per_thread](int32_t lane) {
    for (const auto& stream : opened.manifest.streams) {
      int32_t id = per_thread || stream.cpu == kUnknownId ? stream.tid : stream.cpu;
      if (stream.name == "raw" && !per_thread) id = stream.cpu != kUnknownId ? stream.cpu : 0;
      if (id == lane) return stream.name;
    }
    return std::string();
  };
  const ImageSet& images = session->images;
  return Report(options, *run->profiler, run->clock.unit,
                [&images](uint64_t ip) { return images.Symbolize(ip); }, lane_name);
}

}  // namespace

Command AddDeltaCommand(CLI::App& parent) {
  auto options = std::make_shared<DeltaCommandOptions>();
  CLI::App* app = parent.add_subcommand(
      "delta", "Delta profiling: time and instruction-count histograms of the intervals between "
               "two instruction patterns (e.g. --pair superCLI,superSTI)");
  app->add_option("input", options->input, "raw Intel PT trace, perf.data or .ptar")->required();
  AddPairOptions(*app, options->pair, /*pair_required=*/true);
  AddImageOptions(*app, options->in);
  AddPtOptions(*app, options->in);
  AddAddrFilterOption(*app, options->in);
  AddStreamOption(*app, options->in);
  AddBinarySearchOptions(*app, options->in);
  app->add_option("--bins", options->bins, "histogram bins (linear scale; default 20)");
  app->add_option("--scale", options->scale, "histogram scale: lin or log2 (octaves)")
      ->check(CLI::IsMember({"lin", "log2"}));
  app->add_option("--top", options->top, "the K longest intervals to list (default 10)");
  app->add_option("--format", options->format, "text, json or csv (one row per interval)")
      ->check(CLI::IsMember({"text", "json", "csv"}));
  app->add_option("--svg", options->svg, "also write both histograms as an SVG plot to FILE");
  app->add_flag("--verbose", options->verbose,
                "say how each PT stream was decoded: in how many PSB segments, how many of them "
                "profiled in parts on the decoding threads, or why sequentially");
  return {app, [options, app] {
            options->in.RecordImageOrder(*app);
            return RunDeltaCommand(*options);
          }};
}

}  // namespace ptprof::cli
