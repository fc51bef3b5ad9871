#pragma once
// ptprof record --backend swbt: runs the program natively with the software branch tracer
// (libptprof-swbt.so, docs/swbt.md) preloaded and archives its bursts, the process mappings, the
// binaries and the tracer's counters. cmd_record.cc parses the shared options and hands them over.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "src/model/result.h"
#include "src/record/triggers/trigger_spec.h"

namespace ptprof::cli {

struct RecordSwbtRequest {
  std::string output;
  bool force = false;
  uint32_t lbr_depth = 16;
  std::string sample_period = "1ms";
  std::vector<std::string> command;
  bool binaries = true;
  bool quiet = false;
  // Snapshot mode (docs/swbt.md, "Snapshots"): triggers observed live, each cutting the bursts a
  // ring of `ring_bytes` per process would hold (policy.pre_bytes when set).
  record::triggers::SnapshotPolicy policy;
  uint64_t ring_bytes = 65536;
};

int RunRecordSwbt(const RecordSwbtRequest& request);

// "1ms", "500us", "0.5ms", "2s", "250000ns" (a bare number is milliseconds) in nanoseconds.
Result<uint64_t> ParseDurationNs(const std::string& text);

}  // namespace ptprof::cli
