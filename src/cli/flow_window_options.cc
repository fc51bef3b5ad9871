#include "src/cli/flow_window_options.h"

#include <cinttypes>
#include <cstdio>

#include "src/analyses/patterns/insn_text.h"
#include "src/cli/command.h"

namespace ptprof::cli {

void AddWindowOptions(CLI::App& app, WindowOptions& options) {
  auto* interval = app.add_option(
      "--interval", options.interval,
      "only the flow of delta interval ID (as `ptprof delta` numbers it; give the same --pair)");
  auto* around = app.add_option("--around", options.around,
                                "only the flow around a trace OFFSET, or a TIME with an ns suffix "
                                "(e.g. 1500ns, the unit ptprof delta reports)");
  interval->excludes(around);
  app.add_option("--context", options.context, "--around: events before and after (default 20)");
  AddPairOptions(app, options.pair, /*pair_required=*/false);
}

int MakeFlowWindow(const WindowOptions& options, const Session& session,
                   const std::vector<size_t>& selected, const std::string& input, EventSink& next,
                   std::unique_ptr<delta::FlowWindow>& window) {
  if (!options.Any()) return kExitOk;
  delta::WindowSpec spec;
  spec.context = options.context;
  if (!options.around.empty()) {
    std::string text = options.around;
    bool is_time = text.size() > 2 && text.substr(text.size() - 2) == "ns";
    if (is_time) text.resize(text.size() - 2);
    char* end = nullptr;
    double time = is_time ? std::strtod(text.c_str(), &end) : 0;
    auto offset = is_time ? std::nullopt : patterns::ParseNumber(text);
    if ((is_time && (end == text.c_str() || *end)) || (!is_time && !offset)) {
      std::fprintf(stderr, "ptprof: decode: --around '%s': expected a trace offset (0x...) or a "
                   "time in ns (e.g. 1500ns)\n", options.around.c_str());
      return kExitUsage;
    }
    spec.kind = is_time ? delta::WindowSpec::Kind::kTime : delta::WindowSpec::Kind::kOffset;
    spec.time = time;
    spec.offset = offset.value_or(0);
    spec.time_of = ClockFor(session).time.AsFunction();
    window = std::make_unique<delta::FlowWindow>(spec, next);
    return kExitOk;
  }
  if (options.pair.pair.empty()) {
    std::fprintf(stderr, "ptprof: decode: --interval needs the --pair (and --pattern) it was "
                 "numbered with\n");
    return kExitUsage;
  }
  auto pair = ResolvePair(options.pair);
  if (!pair) {
    std::fprintf(stderr, "ptprof: decode: %s\n", pair.error().message.c_str());
    return kExitUsage;
  }
  auto run = RunDelta(session, selected, *pair, options.pair.per_thread, input);
  if (!run) return ReportBadInput(run.error().message);
  const auto& intervals = run->profiler->intervals();
  if (options.interval > intervals.size())
    return ReportBadInput(input + ": no interval " + std::to_string(options.interval) + " (" +
                          std::to_string(intervals.size()) + " intervals of " + options.pair.pair + ")");
  const delta::Interval& interval = intervals[options.interval - 1];
  spec.kind = delta::WindowSpec::Kind::kInterval;
  spec.lane = interval.lane;
  spec.per_thread = options.pair.per_thread;
  spec.first_position = interval.open_position;
  spec.last_position = interval.close_position;
  std::fprintf(stderr, "ptprof: interval %" PRIu64 ": %" PRIu64 " instructions from 0x%" PRIx64
               " to 0x%" PRIx64 " (trace offsets 0x%" PRIx64 "..0x%" PRIx64 ")\n",
               interval.id, interval.instructions(), interval.open_ip, interval.close_ip,
               interval.open_offset, interval.close_offset);
  window = std::make_unique<delta::FlowWindow>(spec, next);
  return kExitOk;
}

}  // namespace ptprof::cli
