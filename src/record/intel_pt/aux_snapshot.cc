#include "src/record/intel_pt/aux_snapshot.h"

#include <cpuid.h>

#include <algorithm>
#include <cstring>

namespace ptprof::record::hw {

std::vector<uint8_t> LinearizeAuxRing(const uint8_t* ring, uint64_t size, uint64_t head,
                                      uint64_t want) {
  const uint64_t n = std::min({head, size, want});
  std::vector<uint8_t> out(n);
  if (n == 0 || size == 0) return out;
  const uint64_t start = (head - n) % size;
  const uint64_t first = std::min(n, size - start);
  std::memcpy(out.data(), ring + start, first);
  std::memcpy(out.data() + first, ring, n - first);
  return out;
}

Result<perf::PerfClock> ClockFromMmapPage(const perf_event_mmap_page& page) {
  if (!page.cap_user_time_zero)
    return Fail("perf mmap page: cap_user_time_zero is 0: the kernel publishes no TSC conversion "
                "(no constant TSC, or a clock source other than tsc)");
  perf::PerfClock clock;
  clock.time_shift = page.time_shift;
  clock.time_mult = page.time_mult;
  clock.time_zero = page.time_zero;
  return clock;
}

void DecodeCpuSignature(uint32_t eax, CpuIdentity& out) {
  const uint32_t base_family = (eax >> 8) & 0xf;
  const uint32_t base_model = (eax >> 4) & 0xf;
  out.stepping = eax & 0xf;
  out.family = base_family == 0xf ? base_family + ((eax >> 20) & 0xff) : base_family;
  out.model = (base_family == 0x6 || base_family == 0xf) ? (((eax >> 16) & 0xf) << 4) | base_model
                                                         : base_model;
}

CpuIdentity ReadCpuIdentity() {
  CpuIdentity out;
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(0, &a, &b, &c, &d)) return out;
  const unsigned max_leaf = a;
  char vendor[13] = {};
  std::memcpy(vendor, &b, 4);
  std::memcpy(vendor + 4, &d, 4);
  std::memcpy(vendor + 8, &c, 4);
  out.vendor = vendor;
  if (__get_cpuid(1, &a, &b, &c, &d)) DecodeCpuSignature(a, out);
  if (max_leaf >= 7) {
    __cpuid_count(7, 0, a, b, c, d);
    out.has_intel_pt = (b >> 25) & 1;
  }
  return out;
}

}  // namespace ptprof::record::hw
