#pragma once
// ptprof record --backend qemu-system: the kernel lab (docs/lab.md). cmd_record.cc parses the
// shared options and hands them over here.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "decoders/pt/trace_encoder.h"
#include "src/record/triggers/trigger_spec.h"

namespace ptprof::cli {

struct RecordSystemRequest {
  std::string output;
  bool force = false;
  pt::EncoderOptions encoder;
  uint32_t cycles_per_insn = 1;
  std::optional<uint64_t> mtc_period, cyc_threshold;
  std::vector<std::string> snapshot_on;
  record::triggers::SnapshotPolicy policy;  // --snapshot-on and its limits, parsed
  uint64_t buffer_size = 65536;
  std::vector<std::string> command;
  std::string kernel;  // empty: the lab's default kernel
  std::string tracer = "nop";
  unsigned smp = 1;
  unsigned timeout_seconds = 300;
  std::string qemu;    // empty: qemu-system-x86_64
  std::string plugin;
  bool keep_stream = false;
  bool quiet = false;
};

int RunRecordSystem(const RecordSystemRequest& request);

}  // namespace ptprof::cli
