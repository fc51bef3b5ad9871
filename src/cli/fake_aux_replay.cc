#include "src/cli/fake_aux_replay.h"

#include <fstream>
#include <variant>

#include "sideband/perf/perf_data.h"
#include "src/pipeline/session_archive.h"

namespace ptprof::cli {

namespace {

bool IsPerfData(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[8] = {};
  in.read(magic, sizeof magic);
  return in.gcount() == 8 && std::string(magic, 8) == "PERFILE2";
}

}  // namespace

Result<FakeAuxReplay> LoadFakeAuxReplay(const std::string& path) {
  FakeAuxReplay replay;
  if (!IsPerfData(path)) {
    auto source = OpenArchiveSession(path);
    if (!source) return tl::unexpected(source.error());
    if (source->stream_bytes.empty()) return Fail(path + ": no stream to replay");
    replay.trace = source->stream_bytes[0].ToVector();
    return replay;
  }
  auto data = perf::ReadPerfData(path);
  if (!data) return tl::unexpected(data.error());
  if (data->aux_streams.empty()) return Fail(path + ": no AUX stream to replay");
  replay.trace = data->StreamBytes(data->aux_streams[0]).ToVector();
  for (const perf::PerfRecord& r : data->sideband)
    if (const auto* m = std::get_if<perf::MmapRecord>(&r.body))
      if (m->executable && !m->filename.empty() && m->filename[0] == '/')
        replay.mappings.push_back({m->addr, m->len, m->pgoff, m->filename});
  return replay;
}

}  // namespace ptprof::cli
