#include "sideband/perf/perf_clock.h"

namespace ptprof::perf {

uint64_t PerfClock::TscToPerfTime(uint64_t tsc) const {
  if (!usable()) return 0;
  // Split the product so that tsc * mult does not overflow 64 bits.
  uint64_t quot = tsc >> time_shift;
  uint64_t rem = tsc & ((uint64_t{1} << time_shift) - 1);
  return time_zero + quot * time_mult + ((rem * time_mult) >> time_shift);
}

uint64_t PerfClock::PerfTimeToTsc(uint64_t ns) const {
  if (!usable()) return 0;
  uint64_t t = ns - time_zero;
  uint64_t quot = t / time_mult;
  uint64_t rem = t % time_mult;
  return (quot << time_shift) + (rem << time_shift) / time_mult;
}

}  // namespace ptprof::perf
