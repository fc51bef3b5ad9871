#pragma once
// SyscallTracepoints answers "which syscalls did the recorded threads enter and leave, and when?"
// on a real kernel: it opens the raw_syscalls:sys_enter and sys_exit tracepoints through
// perf_event_open (ids and field offsets read from tracefs, which it mounts if needed), samples
// every event with its raw record (the syscall number), tid and CLOCK_MONOTONIC time, and turns
// the samples into TriggerEvents for the TriggerEngine.
//
// Two scopes: per CPU (one event per online CPU for `pid`, inherited by its threads and children:
// what recording a command needs) or per thread (one event for `pid` as a thread id, no inherit).
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "src/model/result.h"
#include "src/record/triggers/trigger_engine.h"

namespace ptprof::record::triggers {

class SyscallTracepoints {
 public:
  enum class Scope { kPerCpu, kPerThread };
  struct Options {
    Scope scope = Scope::kPerCpu;
    uint32_t ring_pages = 64;      // data pages of each ring (a power of two)
    bool enable_on_exec = false;   // start counting when `pid` calls execve
    bool mount_tracefs = true;
    // Only these syscall numbers, filtered in the kernel (empty: every syscall). Fewer samples
    // means a ring that fills less often while the recorder is not scheduled.
    std::vector<uint64_t> only_syscalls;
  };

  // Opens the events (disabled unless enable_on_exec). Errors say what is missing: tracefs,
  // permission (perf_event_paranoid, CAP_PERFMON), the tracepoints.
  static Result<std::unique_ptr<SyscallTracepoints>> Open(pid_t pid, const Options& options);
  ~SyscallTracepoints();
  SyscallTracepoints(const SyscallTracepoints&) = delete;
  SyscallTracepoints& operator=(const SyscallTracepoints&) = delete;

  Status Enable();
  Status Disable();
  // Appends the events recorded since the last call, sorted by time.
  void Drain(std::vector<TriggerEvent>& out);
  // The ring file descriptors (poll them for POLLIN).
  std::vector<int> Fds() const;
  uint64_t lost() const { return lost_; }  // samples the kernel dropped (PERF_RECORD_LOST)

 private:
  struct Ring;
  SyscallTracepoints() = default;
  void DrainRing(Ring& ring, std::vector<TriggerEvent>& out);

  std::vector<std::unique_ptr<Ring>> rings_;
  uint64_t enter_id_ = 0;
  uint64_t exit_id_ = 0;
  uint32_t enter_nr_offset_ = 8;
  uint32_t exit_nr_offset_ = 8;
  uint64_t lost_ = 0;
};

// The tracepoint filter keeping only `syscalls` ("id == 35 || id == 230"); empty for none.
std::string SyscallFilterText(const std::vector<uint64_t>& syscalls);

// Explains an errno of perf_event_open as a user can act on it (paranoid level, capability).
std::string PerfOpenErrorText(int error, const std::string& what);

// The online CPUs (/sys/devices/system/cpu/online, "0-3,6").
std::vector<int> OnlineCpus();

}  // namespace ptprof::record::triggers
