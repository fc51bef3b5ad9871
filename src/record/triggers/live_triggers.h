#pragma once
// LiveTriggers answers "which snapshots does the running program ask for, and when?" for the
// native backends (swbt, intel_pt, cs_etm): it opens what the TriggerEngine needs to observe for
// one process tree — the raw_syscalls tracepoints (syscall=, syscall-latency>), execute
// breakpoints (addr=, addresses resolved by the backend), the signal_deliver tracepoint (signal=)
// and the clock (every=) — waits for their events, feeds them to the engine in time order and
// hands back the decisions. Times are CLOCK_MONOTONIC nanoseconds.
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "src/model/result.h"
#include "src/record/triggers/process_probes.h"
#include "src/record/triggers/syscall_tracepoints.h"
#include "src/record/triggers/trigger_engine.h"

namespace ptprof::record::triggers {

class LiveTriggers {
 public:
  // `engine` must outlive this; addr= triggers must be resolved (TriggerEngine::ResolveAddress)
  // before. With `enable_on_exec` the events start when `pid` calls execve.
  static Result<std::unique_ptr<LiveTriggers>> Open(pid_t pid, TriggerEngine& engine,
                                                    bool enable_on_exec);
  Status Enable();
  // Waits up to `timeout_ms` for events (0: only what is there), feeds them and a clock tick to
  // the engine in time order, and appends the decisions they cause. Events newer than the poll
  // minus kReorderNs wait for a later poll (another CPU's ring may still deliver older ones);
  // `final` feeds everything (the program has ended).
  void Poll(int timeout_ms, std::vector<SnapshotDecision>& out, bool final = false);
  static constexpr uint64_t kReorderNs = 2'000'000;
  // Events the kernel dropped (its rings were full).
  uint64_t lost() const;

 private:
  LiveTriggers() = default;
  TriggerEngine* engine_ = nullptr;
  std::unique_ptr<SyscallTracepoints> syscalls_;
  std::unique_ptr<ProcessProbes> probes_;
  bool ticks_ = false;
  uint64_t last_ns_ = 0;  // the newest event time fed, so the engine sees time in order
  std::vector<TriggerEvent> held_;  // drained, not fed yet
};

// CLOCK_MONOTONIC now, in nanoseconds.
uint64_t MonotonicNowNs();

}  // namespace ptprof::record::triggers
