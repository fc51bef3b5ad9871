#include "decoders/etm/snapshot_decode.h"

#include "decoders/etm/snapshot_memory.h"
#include "sideband/file_bytes.h"

namespace ptprof::etm {

Result<SnapshotDecode> OpenSnapshotDecode(const std::string& dir, const SnapshotDecodeRequest& request) {
  SnapshotDecode d;
  auto snapshot = LoadSnapshot(dir);
  if (!snapshot) return tl::unexpected(snapshot.error());
  d.snapshot = std::move(*snapshot);
  d.warnings = d.snapshot.warnings;
  auto plan = PlanBuffer(d.snapshot, request.buffer);
  if (!plan) return tl::unexpected(plan.error());
  d.plan = std::move(*plan);
  for (const std::string& s : d.plan.skipped) d.warnings.push_back(dir + ": " + s);
  EtmDecodeOptions options = request.options;
  for (const std::string& name : request.sources) {
    bool found = false;
    std::string known;
    for (const SourceConfig& s : d.plan.sources) {
      known += (known.empty() ? "" : ", ") + s.source;
      if (s.source == name) {
        options.trace_ids.insert(s.trace_id);
        found = true;
      }
    }
    if (!found)
      return Fail(dir + ": no trace source '" + name + "' in buffer " + d.plan.buffer.name +
                  " (there are: " + known + ")");
  }
  auto format = BufferFormatOf(d.plan.buffer.format);
  if (!format) return Fail(d.plan.buffer.where + ": " + format.error().message);
  auto trace = ReadFileBytes(d.plan.buffer.file);
  if (!trace) return tl::unexpected(trace.error());
  d.trace = std::move(*trace);
  if (d.trace.empty()) return Fail(d.plan.buffer.file + ": the trace buffer is empty");
  auto decoder = EtmDecoder::Create(*format, d.plan.sources, options);
  if (!decoder) return Fail(dir + ": " + decoder.error().message);
  d.decoder = std::move(*decoder);
  if (!options.packets_only) {
    auto memory = LoadSnapshotMemory(d.snapshot, d.plan, d.warnings);
    if (!memory) return tl::unexpected(memory.error());
    d.memory = std::move(*memory);
    for (const MemoryImage& m : d.memory) {
      auto added = d.decoder->AddMemory(m);
      if (!added) d.warnings.push_back(added.error().message);
    }
  }
  return d;
}

}  // namespace ptprof::etm
