#include "src/cli/delta_run.h"

#include <cstdio>

#include "src/pipeline/decode_streams.h"
#include "src/analyses/patterns/pattern_library.h"

namespace ptprof::cli {

void AddPairOptions(CLI::App& app, PairOptions& options, bool pair_required) {
  auto* pair = app.add_option("--pair", options.pair,
                              "OPEN,CLOSE: the patterns that open and close an interval "
                              "(built-in names such as superCLI,superSTI, or --pattern names)");
  if (pair_required) pair->required();
  app.add_option("--pattern", options.patterns,
                 "NAME=DEFINITION: define a pattern (docs/delta.md), repeatable");
  app.add_flag("--per-thread", options.per_thread, "intervals per thread instead of per CPU");
}

Result<std::pair<patterns::Pattern, patterns::Pattern>> ResolvePair(const PairOptions& options) {
  patterns::PatternLibrary library;
  for (const std::string& spec : options.patterns) {
    auto defined = library.Define(spec);
    if (!defined) return tl::unexpected(defined.error());
  }
  size_t comma = options.pair.find(',');
  if (comma == std::string::npos || options.pair.find(',', comma + 1) != std::string::npos)
    return Fail("--pair '" + options.pair + "': expected two pattern names as OPEN,CLOSE");
  auto open = library.Find(options.pair.substr(0, comma));
  if (!open) return tl::unexpected(open.error());
  auto close = library.Find(options.pair.substr(comma + 1));
  if (!close) return tl::unexpected(close.error());
  return std::make_pair(std::move(*open), std::move(*close));
}

ProfileClock ClockFor(const Session& session) {
  ProfileClock clock;
  clock.time = EventClock::OfNominalFrequency(session.params().nom_freq);
  clock.unit = clock.time.in_ns() ? "ns" : "ticks";
  return clock;
}

Result<DeltaRun> RunDelta(const Session& session, const std::vector<size_t>& selected,
                          const std::pair<patterns::Pattern, patterns::Pattern>& pair,
                          bool per_thread, const std::string& where,
                          delta::IntervalKeeping keeping) {
  DeltaRun run;
  run.clock = ClockFor(session);
  delta::DeltaOptions options;
  options.per_thread = per_thread;
  options.keeping = keeping;
  options.clock = run.clock.time;
  auto profiler = delta::DeltaProfiler::Create(session.images, pair.first, pair.second, options);
  if (!profiler) return tl::unexpected(profiler.error());
  run.profiler = std::move(*profiler);
  // The streams merged by time, each event stamped with its stream's cpu/pid/tid: the profiler's
  // lanes. A raw trace is one stream whose failures are the input's; a stream of a multi-stream
  // input that cannot be decoded is a warning and the others go on.
  DecodeStreamsOptions decode;
  decode.mark_runs = true;  // the profile works each TNT run out once (run_memo.h)
  const auto outcomes = DecodeStreams(session, selected, decode, *run.profiler);
  for (const StreamOutcome& outcome : outcomes) {
    const archive::StreamEntry& stream = session.manifest.streams[outcome.stream];
    const bool named = stream.name != "raw";
    const std::string stream_where = named ? where + ": stream " + stream.name : where;
    if (!outcome.summary) {
      if (!named) return Fail(stream_where + ": " + outcome.error);
      std::fprintf(stderr, "ptprof: warning: %s: %s\n", stream_where.c_str(), outcome.error.c_str());
      continue;
    }
    run.decode_notes.push_back(stream_where + ": " + DescribeDecode(*outcome.summary));
    if (!outcome.summary->has_psb) {
      if (!named) return Fail(stream_where + ": offset 0x0: no PSB found: not an Intel PT trace");
      std::fprintf(stderr, "ptprof: warning: %s: offset 0x0: no PSB found\n", stream_where.c_str());
    }
  }
  run.profiler->OnEnd();
  return run;
}

}  // namespace ptprof::cli
