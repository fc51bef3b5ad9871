#pragma once
// The pieces of an AUX-area snapshot that do not need hardware, each a pure function so they are
// unit-tested here: which bytes of an overwrite-mode AUX ring are the newest `want` bytes in
// order (LinearizeAuxRing), the TSC <-> perf time conversion the kernel publishes in the perf
// mmap page (ClockFromMmapPage), and the CPU identity decoders need (CpuIdentity, from CPUID).
//
// A snapshot on real hardware (AuxSnapshotter, aux_session.h) pauses the output with
// PERF_EVENT_IOC_PAUSE_OUTPUT, reads aux_head, copies the ring with LinearizeAuxRing and resumes.
#include <linux/perf_event.h>

#include <cstdint>
#include <string>
#include <vector>

#include "sideband/perf/perf_clock.h"
#include "src/model/result.h"

namespace ptprof::record::hw {

// In overwrite (snapshot) mode the kernel writes the AUX ring circularly and aux_head counts every
// byte ever written; the newest byte is at (head - 1) % size. Returns the last min(head, size,
// want) bytes, oldest first.
std::vector<uint8_t> LinearizeAuxRing(const uint8_t* ring, uint64_t size, uint64_t head,
                                      uint64_t want);

// time_shift/time_mult/time_zero of the mmap page; fails unless cap_user_time_zero is set.
Result<perf::PerfClock> ClockFromMmapPage(const perf_event_mmap_page& page);

struct CpuIdentity {
  std::string vendor;  // "GenuineIntel", "AuthenticAMD", ...
  uint32_t family = 0, model = 0, stepping = 0;  // display family/model (extended fields added)
  bool has_intel_pt = false;  // CPUID.(EAX=7,ECX=0):EBX[25]
};
// This CPU, from CPUID (leaves 0, 1, 7).
CpuIdentity ReadCpuIdentity();
// Family/model/stepping from CPUID.1:EAX (extended family and model folded in as Intel and AMD
// document it).
void DecodeCpuSignature(uint32_t eax, CpuIdentity& out);

}  // namespace ptprof::record::hw
