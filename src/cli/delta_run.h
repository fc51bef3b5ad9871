#pragma once
// What `ptprof delta` and `ptprof decode --interval/--around` share: the pattern options
// (--pair, --pattern, --per-thread), resolving the pair against the pattern library, the
// profile's time unit and clock (ns from the trace's nominal frequency, else TSC ticks), and
// running a DeltaProfiler over the selected streams of a session.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "src/analyses/delta/delta_profiler.h"
#include "src/analyses/patterns/pattern.h"
#include "src/pipeline/session.h"

namespace ptprof::cli {

struct PairOptions {
  std::string pair;                   // "OPEN,CLOSE"
  std::vector<std::string> patterns;  // "NAME=DEFINITION"
  bool per_thread = false;
};

// --pair (required when `pair_required`), --pattern (repeatable), --per-thread.
void AddPairOptions(CLI::App& app, PairOptions& options, bool pair_required);

// The two patterns of --pair, after the --pattern definitions. Errors (a definition that does
// not parse, an unknown name, a malformed pair) are usage errors.
Result<std::pair<patterns::Pattern, patterns::Pattern>> ResolvePair(const PairOptions& options);

// The profile's clock for `session`: its unit ("ns" or "ticks") and an event's time in it.
struct ProfileClock {
  std::string unit;
  EventClock time;  // (time.AsFunction() for the consumers that take a function)
};
ProfileClock ClockFor(const Session& session);

struct DeltaRun {
  std::unique_ptr<delta::DeltaProfiler> profiler;
  ProfileClock clock;
  std::vector<std::string> decode_notes;  // per stream decoded: "WHERE: decoded in ..." (--verbose)
};

// Decodes the `selected` streams of `session` into a DeltaProfiler for `pair`. Streams that cannot
// be decoded are warnings (on stderr) unless the input is a single raw trace; `where` names the
// input in messages.
Result<DeltaRun> RunDelta(const Session& session, const std::vector<size_t>& selected,
                          const std::pair<patterns::Pattern, patterns::Pattern>& pair,
                          bool per_thread, const std::string& where,
                          delta::IntervalKeeping keeping = {});

}  // namespace ptprof::cli
