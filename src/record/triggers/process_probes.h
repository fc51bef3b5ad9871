#pragma once
// ProcessProbes answers "when did the recorded process reach this address, or get this signal?"
// on a real kernel, for the addr= and signal= triggers of the native backends: hardware execute
// breakpoints (PERF_TYPE_BREAKPOINT) and the signal:signal_deliver tracepoint, opened through
// perf_event_open for a process and inherited by its threads and children (one event per online
// CPU), sampled with the thread id and CLOCK_MONOTONIC time (the clock SyscallTracepoints and the
// swbt bursts use), and turned into TriggerEvents.
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "src/model/result.h"
#include "src/record/triggers/trigger_engine.h"

namespace ptprof::record::triggers {

class ProcessProbes {
 public:
  struct Options {
    std::vector<uint64_t> breakpoints;  // execute breakpoints at these addresses
    bool signals = false;               // signal:signal_deliver
    bool enable_on_exec = false;        // start when `pid` calls execve
    bool mount_tracefs = true;
    uint32_t ring_pages = 16;
  };
  // Opens the events, disabled unless enable_on_exec. Errors say what is missing (permission,
  // the tracepoint, the breakpoint slots).
  static Result<std::unique_ptr<ProcessProbes>> Open(pid_t pid, const Options& options);
  ~ProcessProbes();
  ProcessProbes(const ProcessProbes&) = delete;
  ProcessProbes& operator=(const ProcessProbes&) = delete;

  Status Enable();
  // Appends the breakpoint hits and signal deliveries since the last call, sorted by time.
  void Drain(std::vector<TriggerEvent>& out);
  std::vector<int> Fds() const;
  uint64_t lost() const { return lost_; }

 private:
  struct Ring;
  ProcessProbes() = default;
  void DrainRing(Ring& ring, std::vector<TriggerEvent>& out);

  std::vector<std::unique_ptr<Ring>> rings_;
  uint64_t signal_id_ = 0;
  uint32_t sig_offset_ = 8;
  uint64_t lost_ = 0;
};

// Decodes one PERF_RECORD_SAMPLE of a ProcessProbes event (exposed for tests): breakpoint samples
// carry IP, TID, TIME; signal samples TID, TIME, RAW. Returns false for records it does not know.
bool ParseProbeSample(const uint8_t* record, size_t size, bool breakpoint, uint64_t signal_id,
                      uint32_t sig_offset, TriggerEvent& event);

}  // namespace ptprof::record::triggers
