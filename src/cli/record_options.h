#pragma once
// RecordOptions: everything `ptprof record` parses (all backends), so that each backend's file
// (cmd_record*.cc) reads the same options; ParseSnapshotPolicy turns the snapshot options into
// the trigger engine's policy.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "src/model/result.h"
#include "src/record/triggers/trigger_spec.h"

namespace ptprof::cli {

struct RecordOptions {
  std::string backend = "qemu";
  std::string output;
  bool force = false;
  uint64_t psb_period = 4096;
  std::optional<uint64_t> mtc_period;     // MTCFreq exponent: an MTC every 2^N CTC ticks
  std::optional<uint64_t> cyc_threshold;  // CycThresh: CYC packets when >= 2^(N-1) cycles
  bool no_tsc = false;
  bool no_retcomp = false;
  bool tnt64 = false;
  uint64_t cycles_per_insn = 1;
  uint64_t tsc_per_ctc = 2;
  std::string qemu = "qemu-x86_64";
  std::string plugin;
  bool keep_stream = false;
  bool no_binaries = false;
  bool quiet = false;
  std::vector<std::string> snapshot_on;  // the trigger grammar of src/record/triggers
  uint64_t buffer_size = 65536;
  std::string pre;           // SIZE: the ring kept before a trigger (default: --buffer-size)
  std::string post;          // DURATION: keep tracing after a trigger, then cut
  std::string min_interval;  // DURATION: drop triggers closer than this to the last cut
  uint64_t max_snapshots = 0;
  std::vector<std::string> command;
  // --backend qemu-system (the kernel lab, docs/lab.md)
  std::string kernel;
  std::string guest_tracer = "nop";
  unsigned smp = 1;
  unsigned timeout = 300;
  // --backend swbt (the software branch tracer, docs/swbt.md)
  uint32_t lbr_depth = 16;
  std::string sample_period = "1ms";
  // --backend intel_pt / cs_etm (docs/recording.md, "Hardware")
  std::vector<std::string> filters;  // --filter, perf's address filter syntax
  bool per_thread = false;           // one event for the command's thread instead of per CPU
  bool trace_kernel = false;         // trace ring 0 as well
  bool no_user = false;              // do not trace ring 3 (with trace_kernel: the kernel only)
  bool no_branch = false;            // intel_pt: BranchEn off (timing and PSB+ packets only)
  std::string sink;                  // cs_etm: the sink (empty: an ETR, else the first)
  bool full = false;                 // the whole run (normal-mode AUX), not snapshots
};

// --snapshot-on, --pre, --post, --max-snapshots, --min-interval as one policy for the trigger
// engine (src/record/triggers, docs/recording.md); errors name the option and column.
Result<record::triggers::SnapshotPolicy> ParseSnapshotPolicy(const RecordOptions& options);
// The same for the native backends (swbt, intel_pt, cs_etm), which count no instructions: an
// insns= trigger is refused, naming the backend.
Result<record::triggers::SnapshotPolicy> ParseNativeSnapshotPolicy(const RecordOptions& options);

}  // namespace ptprof::cli
