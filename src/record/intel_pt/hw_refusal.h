#pragma once
// HardwareReadiness answers "can a hardware tracing backend (intel_pt, cs_etm) record on this
// machine, and if not, exactly why and what to use instead?": the PMU in sysfs (and, when it is
// missing, whether this is an AMD or Arm CPU, a VM without PT passthrough, or a kernel without the
// driver), perf_event_paranoid against CAP_PERFMON/CAP_SYS_ADMIN, and tracefs for syscall
// triggers. Roots come from $PTPROF_SYSFS_ROOT and $PTPROF_PROC_ROOT so tests can fake them.
#include <cstdint>
#include <string>

namespace ptprof::record::hw {

struct HardwareReadiness {
  bool ready = false;
  std::string reason;       // one line: what is missing, with the path that says so
  std::string alternative;  // which backends would work here
};

struct ReadinessQuery {
  std::string backend;           // "intel_pt" or "cs_etm"
  std::string sysfs_root;        // "/sys"
  std::string proc_root;         // "/proc"
  bool needs_kernel = false;     // --kernel tracing asks for a lower paranoid level
  bool needs_tracepoints = false;  // syscall triggers use raw_syscalls
};

ReadinessQuery DefaultQuery(const std::string& backend);
HardwareReadiness CheckHardware(const ReadinessQuery& query);

}  // namespace ptprof::record::hw
