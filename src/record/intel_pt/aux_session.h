#pragma once
// AuxSession answers "what has the hardware traced on these CPUs so far?" for the intel_pt and
// cs_etm backends: one AUX-tracing event per CPU (or one for a thread) opened from an HwAttr, its
// normal ring for the sideband (MMAP2, COMM, FORK, EXIT, SWITCH, ITRACE_START, AUX, LOST records)
// and its AUX area mapped PROT_READ, which makes the kernel write it in overwrite (snapshot) mode.
// A snapshot pauses the output (PERF_EVENT_IOC_PAUSE_OUTPUT), reads aux_head, copies the newest
// bytes (LinearizeAuxRing) and resumes. With Options::snapshot off the AUX area is mapped
// writable, the kernel's normal mode: it writes only into the space between aux_head and the
// aux_tail ptprof publishes, and DrainAux takes what it wrote and frees the space (a whole run).
//
// Needs a PMU that exists: on this project's machines (no PT, no CoreSight) it is only reached
// through its error paths; the pure parts it relies on are unit-tested in aux_snapshot_test.cc.
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "sideband/perf/perf_clock.h"
#include "src/model/result.h"
#include "src/record/intel_pt/perf_kernel.h"
#include "src/record/intel_pt/pmu_sysfs.h"

namespace ptprof::record::hw {

class AuxSession {
 public:
  struct Options {
    uint32_t data_pages = 64;    // normal ring (sideband), a power of two
    uint32_t aux_pages = 1024;   // AUX area per event, a power of two (4 MiB with 4 KiB pages)
    bool snapshot = true;        // overwrite mode (PROT_READ AUX mapping)
  };
  // One event per entry of `cpus` (-1: follow `pid` on any CPU).
  static Result<std::unique_ptr<AuxSession>> Open(const HwAttr& attr, pid_t pid,
                                                  const std::vector<int>& cpus,
                                                  const Options& options,
                                                  PerfKernel& kernel = RealPerfKernel());
  ~AuxSession();
  AuxSession(const AuxSession&) = delete;
  AuxSession& operator=(const AuxSession&) = delete;

  size_t events() const { return events_.size(); }
  int cpu(size_t index) const;
  Status Enable();
  Status Disable();
  // The newest `want` bytes of event `index`'s AUX area (at most its size), oldest first,
  // starting on a multiple of `align` bytes since the trace began (cs_etm: the formatter's
  // 16-byte frames).
  Result<std::vector<uint8_t>> Snapshot(size_t index, uint64_t want, uint64_t align = 1);
  // Normal mode: appends to `out` what event `index` wrote since the last call, oldest first, and
  // hands the space back to the kernel (aux_tail). Returns the number of bytes appended.
  uint64_t DrainAux(size_t index, std::vector<uint8_t>& out);
  // Appends the sideband records written since the last call (whole perf records).
  void DrainSideband(size_t index, std::vector<uint8_t>& out);
  // The TSC conversion of event `index`'s mmap page.
  Result<perf::PerfClock> Clock(size_t index) const;

 private:
  struct Event;
  AuxSession() = default;
  std::vector<std::unique_ptr<Event>> events_;
  PerfKernel* kernel_ = nullptr;
};

}  // namespace ptprof::record::hw
