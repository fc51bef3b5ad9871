#include "src/record/intel_pt/aux_snapshot.h"

#include <catch2/catch.hpp>

using namespace ptprof::record::hw;

TEST_CASE("an overwrite-mode AUX ring linearises oldest first") {
  const std::vector<uint8_t> ring = {8, 9, 2, 3, 4, 5, 6, 7};  // 10 bytes written into 8
  CHECK(LinearizeAuxRing(ring.data(), 8, 10, 100) == std::vector<uint8_t>{2, 3, 4, 5, 6, 7, 8, 9});
  CHECK(LinearizeAuxRing(ring.data(), 8, 10, 3) == std::vector<uint8_t>{7, 8, 9});
  CHECK(LinearizeAuxRing(ring.data(), 8, 10, 2) == std::vector<uint8_t>{8, 9});
  // Not wrapped yet: only what was written.
  const std::vector<uint8_t> young = {1, 2, 3, 0, 0, 0, 0, 0};
  CHECK(LinearizeAuxRing(young.data(), 8, 3, 100) == std::vector<uint8_t>{1, 2, 3});
  CHECK(LinearizeAuxRing(young.data(), 8, 0, 100).empty());
  // Exactly full, head a multiple of the size.
  const std::vector<uint8_t> full = {1, 2, 3, 4};
  CHECK(LinearizeAuxRing(full.data(), 4, 8, 4) == std::vector<uint8_t>{1, 2, 3, 4});
}

TEST_CASE("the mmap page's TSC conversion") {
  perf_event_mmap_page page{};
  CHECK(!ClockFromMmapPage(page));
  page.cap_user_time_zero = 1;
  page.time_shift = 31;
  page.time_mult = 1073741824;  // 0.5 ns per tick: a 2 GHz TSC
  page.time_zero = 1000;
  auto clock = ClockFromMmapPage(page);
  REQUIRE(clock);
  CHECK(clock->TscToPerfTime(2000) == 1000 + 1000);
}

TEST_CASE("CPU signatures decode as the vendors document") {
  CpuIdentity skylake;
  DecodeCpuSignature(0x000506e3, skylake);  // Skylake client: family 6 model 0x5e stepping 3
  CHECK(skylake.family == 6);
  CHECK(skylake.model == 0x5e);
  CHECK(skylake.stepping == 3);
  CpuIdentity zen3;
  DecodeCpuSignature(0x00a00f11, zen3);  // EPYC Milan: family 0x19 model 1 stepping 1
  CHECK(zen3.family == 0x19);
  CHECK(zen3.model == 0x01);
  CHECK(zen3.stepping == 1);
  const CpuIdentity here = ReadCpuIdentity();
  CHECK(!here.vendor.empty());
  CHECK(here.family != 0);
  // No PT without its PMU: this machine's CPUID bit agrees with sysfs.
  INFO(here.vendor << " family " << here.family << " model " << here.model);
  if (here.vendor != "GenuineIntel") CHECK(!here.has_intel_pt);
}
