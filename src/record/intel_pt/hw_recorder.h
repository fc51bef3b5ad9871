#pragma once
// RecordHardware answers "what did the trace hardware see around each trigger?" for the intel_pt
// and cs_etm backends: it starts the command stopped after execve (triggers/traced_launch.h),
// opens the AUX events (AuxSession: per CPU inherited by the command's threads, or per thread),
// the live triggers (syscall tracepoints, breakpoints, signals, the clock), lets the command run,
// and for each trigger decision, once its cut time (trigger + --post) is reached, pauses each
// event's output, copies the newest --pre bytes of its AUX ring and resumes. Without triggers it
// cuts one snapshot when the command ends. In full mode (`full`) there are no triggers and no
// ring: the AUX areas are in the kernel's normal mode and drained at every poll into a spool file
// per event (aux_spool.h), and the whole run becomes one "snapshot" per event, labelled "full". The sideband ring of every event is drained as it
// goes, and /proc/PID/maps is read at the start and at every cut (for the binaries).
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "sideband/perf/perf_clock.h"
#include "sideband/shared_bytes.h"
#include "src/model/result.h"
#include "src/record/intel_pt/aux_session.h"
#include "src/record/intel_pt/aux_snapshot.h"
#include "src/record/intel_pt/perf_kernel.h"
#include "src/record/triggers/trigger_spec.h"

namespace ptprof::record::hw {

struct HwRecordRequest {
  std::vector<std::string> argv;
  HwAttr attr;
  bool per_cpu = true;
  uint64_t aux_bytes = 4 << 20;  // the AUX ring per event (rounded up to a power-of-two pages)
  uint64_t pre_bytes = 0;        // bytes per snapshot (0: the whole ring)
  uint64_t align = 1;            // snapshots start on multiples of this (cs_etm frames: 16)
  triggers::SnapshotPolicy policy;
  bool full = false;             // the whole run (normal-mode AUX) instead of snapshots
  PerfKernel* kernel = nullptr;  // null: the real one
  int poll_ms = 5;
};

struct HwSnapshot {
  std::string label;      // the trigger's text, or "exit"
  uint32_t tid = 0;       // the thread the trigger fired for (0: none, e.g. a clock tick)
  uint64_t time_ns = 0;   // CLOCK_MONOTONIC time of the trigger
  uint64_t latency_ns = 0;
  uint64_t sequence = 0;
  int cpu = -1;           // the event's CPU (-1: a per-thread event)
  SharedBytes bytes;  // the newest bytes of the AUX ring at the cut, oldest first (--full: all)
};

struct HwRecording {
  pid_t pid = 0;
  bool full = false;  // the whole run: one "snapshot" per event, labelled "full"
  std::vector<HwSnapshot> snapshots;
  std::vector<uint8_t> sideband;          // perf records drained from the events' rings
  std::vector<std::string> maps;          // /proc/PID/maps texts, in the order read
  bool have_clock = false;
  perf::PerfClock clock;                  // TSC <-> perf time of the first event's mmap page
  CpuIdentity cpu;
  int exit_status = -1;
  int signal = 0;
  uint64_t fired = 0, suppressed = 0, lost = 0;
};

Result<HwRecording> RecordHardware(const HwRecordRequest& request);

}  // namespace ptprof::record::hw
