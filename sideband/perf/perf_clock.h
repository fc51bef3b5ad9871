#pragma once
// PerfClock answers "which TSC value is this perf timestamp, and back?" with the kernel's
// cap_user_time conversion (time_shift, time_mult, time_zero) that perf stores in TIME_CONV and in
// intel_pt's AUXTRACE_INFO.
#include <cstdint>

namespace ptprof::perf {

struct PerfClock {
  uint16_t time_shift = 0;
  uint32_t time_mult = 0;
  uint64_t time_zero = 0;

  bool usable() const { return time_mult != 0 && time_shift < 64; }
  // perf time (ns) of a TSC value.
  uint64_t TscToPerfTime(uint64_t tsc) const;
  // TSC value of a perf time (ns); the inverse of TscToPerfTime up to rounding.
  uint64_t PerfTimeToTsc(uint64_t ns) const;
};

}  // namespace ptprof::perf
