#pragma once
// SnapshotDecode answers "what is needed to decode one buffer of a snapshot directory?": the
// snapshot, the buffer's plan, its trace bytes and an EtmDecoder with the cores' memory loaded.
// The CLI, the benchmark and the fuzz target open snapshots through this one function.
#include <memory>
#include <string>
#include <vector>

#include "decoders/etm/etm_decoder.h"
#include "decoders/etm/snapshot.h"
#include "decoders/etm/source_config.h"

namespace ptprof::etm {

struct SnapshotDecodeRequest {
  std::string buffer;                 // buffer name; empty: the first
  std::vector<std::string> sources;   // source names to emit; empty: all
  EtmDecodeOptions options;           // trace_ids is filled from `sources`
};

struct SnapshotDecode {
  Snapshot snapshot;
  BufferPlan plan;
  std::vector<uint8_t> trace;
  std::vector<MemoryImage> memory;
  std::unique_ptr<EtmDecoder> decoder;
  std::vector<std::string> warnings;  // skipped sources, refused memory
};

Result<SnapshotDecode> OpenSnapshotDecode(const std::string& dir, const SnapshotDecodeRequest& request);

}  // namespace ptprof::etm
