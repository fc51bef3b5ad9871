#include "sideband/perf/perf_clock.h"

#include <catch2/catch.hpp>

using ptprof::perf::PerfClock;

TEST_CASE("PerfClock converts TSC to perf time and back") {
  // The parameters of perf.data.intel_pt-4.14 (TIME_CONV): a 1.2 GHz TSC... scaled by 2^31.
  PerfClock clock{31, 1789569706, 18446744041015200657ULL};
  REQUIRE(clock.usable());
  uint64_t tsc = 0x954df58967;
  uint64_t ns = clock.TscToPerfTime(tsc);
  CHECK(clock.PerfTimeToTsc(ns) >= tsc - 1);
  CHECK(clock.PerfTimeToTsc(ns) <= tsc + 1);
  // mult/2^31 ns per tick = 0.8333 ns: 1200 ticks are 1000 ns.
  CHECK(clock.TscToPerfTime(tsc + 1200) - ns == 1000);
  CHECK_FALSE(PerfClock{}.usable());
  CHECK(PerfClock{}.TscToPerfTime(5) == 0);
}
