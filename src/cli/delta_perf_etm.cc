#include "src/cli/delta_perf_etm.h"

#include <cstdio>

#include "src/cli/command.h"
#include "src/model/unended_sink.h"

namespace ptprof::cli {

std::optional<tl::expected<SnapshotDelta, int>> RunDeltaOnPerfEtm(
    const PerfEtmCommandOptions& options, const std::pair<patterns::Pattern, patterns::Pattern>& pair,
    bool per_thread, delta::IntervalKeeping keeping) {
  auto opened = OpenPerfEtmInput(options, true);
  if (!opened) return std::nullopt;
  if (!*opened) return tl::unexpected(opened->error());
  const PerfEtmInput& input = ***opened;

  SnapshotDelta out;
  out.images = std::make_unique<ImageSet>();
  for (const RawImageSpec& spec : input.code_files)
    if (auto added = out.images->AddRaw(spec); !added)
      std::fprintf(stderr, "ptprof: warning: %s: %s\n", options.path.c_str(), added.error().message.c_str());
  for (const perf::AuxStream* stream : input.streams) {
    out.source_names.push_back(stream->name);
    out.source_cpus.push_back(stream->cpu ? static_cast<int>(*stream->cpu) : kUnknownId);
  }

  out.run.clock.unit = "ticks";
  out.run.clock.time = EventClock::Ticks();
  delta::DeltaOptions delta_options;
  delta_options.per_thread = per_thread;
  delta_options.keeping = keeping;
  delta_options.clock = out.run.clock.time;
  auto profiler = delta::DeltaProfiler::Create(*out.images, pair.first, pair.second, delta_options);
  if (!profiler) return tl::unexpected(ReportBadInput(options.path + ": " + profiler.error().message));
  out.run.profiler = std::move(*profiler);
  UnendedSink sink(*out.run.profiler);  // in parts: each AUX run's pieces feed the profiler's parts
  for (const perf::AuxStream* stream : input.streams) {
    int status = ForEachPerfEtmRun(input, *stream, options.path,
                                   [&](etm::EtmDecoder& decoder, const std::vector<uint8_t>& bytes,
                                       uint64_t offset, const std::string& missing) {
      if (!missing.empty()) {  // an interval does not span lost trace
        TraceEvent gap;
        gap.header.offset = offset;
        gap.header.cpu = stream->cpu ? static_cast<int32_t>(*stream->cpu) : kUnknownId;
        TraceGap body;
        body.reason = GapReason::kMissingData;
        body.detail = missing;
        gap.body = body;
        sink.OnEvent(gap);
      }
      etm::EtmDecodeStats stats = decoder.Decode(bytes, sink);
      if (stats.fatal_errors)
        std::fprintf(stderr, "ptprof: warning: %s: stream %s: %llu decoder error(s); decoding resumed after each\n",
                     options.path.c_str(), stream->name.c_str(),
                     static_cast<unsigned long long>(stats.fatal_errors));
    });
    if (status != kExitOk) return tl::unexpected(status);
  }
  out.run.profiler->OnEnd();
  return out;
}

}  // namespace ptprof::cli
