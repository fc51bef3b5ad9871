#include "src/cli/delta_snapshot.h"

#include <cstdio>

#include "decoders/etm/snapshot_decode.h"

namespace ptprof::cli {

Result<SnapshotDelta> RunDeltaOnSnapshot(const std::string& dir, const std::vector<std::string>& sources,
                                         const std::pair<patterns::Pattern, patterns::Pattern>& pair,
                                         bool per_thread, delta::IntervalKeeping keeping) {
  etm::SnapshotDecodeRequest request;
  request.sources = sources;
  auto d = etm::OpenSnapshotDecode(dir, request);
  if (!d) return tl::unexpected(d.error());
  for (const std::string& warning : d->warnings)
    std::fprintf(stderr, "ptprof: warning: %s: %s\n", dir.c_str(), warning.c_str());

  // ImageSet reads code from files: write each memory dump to one in a private directory.
  SnapshotDelta out;
  auto files = ExtractedFiles::Create();
  if (!files) return tl::unexpected(files.error());
  out.files = *files;
  out.images = std::make_unique<ImageSet>();
  for (size_t i = 0; i < d->memory.size(); ++i) {
    const etm::MemoryImage& m = d->memory[i];
    if (!m.bytes || m.bytes->empty()) continue;
    std::string path = out.files->dir() + "/dump" + std::to_string(i);
    std::FILE* f = std::fopen(path.c_str(), "wb");
    bool written = f && std::fwrite(m.bytes->data(), 1, m.bytes->size(), f) == m.bytes->size();
    if (f) written = std::fclose(f) == 0 && written;
    if (!written) return Fail(path + ": cannot write a copy of " + m.where);
    auto added = out.images->AddRaw(RawImageSpec{path, 0, m.bytes->size(), m.address});
    if (!added) return tl::unexpected(added.error());
  }
  for (const auto& source : d->plan.sources) {
    out.source_names.push_back(source.source);
    out.source_cpus.push_back(source.cpu);
  }

  out.run.clock.unit = "ticks";
  out.run.clock.time = EventClock::Ticks();
  delta::DeltaOptions options;
  options.per_thread = per_thread;
  options.keeping = keeping;
  options.clock = out.run.clock.time;
  auto profiler = delta::DeltaProfiler::Create(*out.images, pair.first, pair.second, options);
  if (!profiler) return tl::unexpected(profiler.error());
  out.run.profiler = std::move(*profiler);
  // Decode ends the profiler's stream (OnEnd) itself.
  const etm::EtmDecodeStats stats = d->decoder->Decode(d->trace, *out.run.profiler);
  out.run.decode_notes.push_back(dir + ": " + etm::HowDecoded(stats));
  return out;
}

}  // namespace ptprof::cli
