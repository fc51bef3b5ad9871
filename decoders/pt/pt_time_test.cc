#include "decoders/pt/pt_time.h"

#include <catch2/catch.hpp>

#include "decoders/pt/pt_time_cal.h"

using namespace ptprof::pt;

namespace {
TimingParams Timing(uint8_t mtc_freq, uint32_t eax, uint32_t ebx) {
  TimingParams params;
  params.mtc_freq = mtc_freq;
  params.cpuid_0x15_eax = eax;
  params.cpuid_0x15_ebx = ebx;
  return params;
}

uint64_t Tsc(const TimeTracker& time) {
  uint64_t tsc = 0;
  REQUIRE(time.Query(tsc) == TimeStatus::kOk);
  return tsc;
}
}  // namespace

TEST_CASE("there is no time before the first TSC") {
  TimeTracker time(Timing(4, 1, 4));
  uint64_t tsc = 1;
  CHECK(time.Query(tsc) == TimeStatus::kNoTime);
  CHECK(tsc == 0);
  CHECK(time.OnTsc(0x1234) == TimeStatus::kOk);
  CHECK(Tsc(time) == 0x1234);
}

TEST_CASE("MTC advances the TSC by CTC ticks times the TSC:CTC ratio") {
  // mtc_freq 4: MTC payload n stands for CTC n << 4; TSC:CTC = 4/1.
  TimeTracker time(Timing(4, 1, 4));
  time.OnTsc(0xa0000);
  // TMA: the TSC was taken 8 fast-counter ticks after CTC 0x18.
  REQUIRE(time.OnTma(0x18, 0x8) == TimeStatus::kOk);
  CHECK(Tsc(time) == 0xa0000);
  REQUIRE(time.OnMtc(0x2) == TimeStatus::kOk);  // CTC 0x20: 8 ticks after 0x18, 0x20 TSC ticks
  CHECK(Tsc(time) == 0xa0018);                  // 0xa0000 - 8 + 0x20
  REQUIRE(time.OnMtc(0x3) == TimeStatus::kOk);
  CHECK(Tsc(time) == 0xa0058);
}

TEST_CASE("the CTC may wrap once between MTCs") {
  // mtc_freq 0: MTC carries CTC bits 7:0; TSC:CTC = 9/3.
  TimeTracker time(Timing(0, 3, 9));
  time.OnTsc(0xa0000);
  REQUIRE(time.OnTma(0x1fff, 0x1) == TimeStatus::kOk);  // CTC low byte 0xff
  REQUIRE(time.OnMtc(0x0) == TimeStatus::kOk);          // 0xff -> 0x100: one tick
  CHECK(Tsc(time) == 0xa0002);                          // 0xa0000 - 1 + 3
  REQUIRE(time.OnMtc(0x1) == TimeStatus::kOk);
  CHECK(Tsc(time) == 0xa0005);
}

TEST_CASE("MTCs before any TSC give relative time") {
  TimeTracker time(Timing(4, 1, 4));
  CHECK(time.OnMtc(0x1) == TimeStatus::kOk);  // the first MTC only sets the CTC
  CHECK(time.OnMtc(0x3) == TimeStatus::kOk);  // 0x20 CTC ticks later
  uint64_t tsc = 0;
  CHECK(time.Query(tsc) == TimeStatus::kNoTime);
  CHECK(tsc == 0x80);
}

TEST_CASE("misplaced TMAs and a missing CTC ratio are errors") {
  TimeTracker time(Timing(4, 1, 4));
  CHECK(time.OnTma(0x18, 0x8) == TimeStatus::kBadContext);  // no TSC yet
  time.OnTsc(0x1000);
  CHECK(time.OnTma(0x18, 0x8) == TimeStatus::kOk);
  CHECK(time.OnTma(0x18, 0x8) == TimeStatus::kBadContext);  // second TMA

  TimeTracker unconfigured(Timing(4, 0, 0));
  unconfigured.OnTsc(0x1000);
  unconfigured.OnTma(0x18, 0x8);
  CHECK(unconfigured.OnMtc(0x2) == TimeStatus::kBadConfig);
  CHECK(unconfigured.OnCbr(0) == TimeStatus::kBadPacket);
  CHECK(unconfigured.core_bus_ratio() == 0);
  CHECK(unconfigured.OnCbr(0x24) == TimeStatus::kOk);
  CHECK(unconfigured.core_bus_ratio() == 0x24);
}

TEST_CASE("CYC adds calibrated cycles, and is lost without calibration") {
  const TimingParams params = Timing(4, 1, 4);
  TimeTracker time(params);
  TimeCalibration calibration(params);
  time.OnTsc(0xa0000);
  time.OnTma(0x18, 0x8);
  time.OnMtc(0x2);
  calibration.OnMtc(0x2);

  uint64_t fcr = 0;
  CHECK(calibration.Fcr(fcr) == TimeStatus::kNoTime);
  CHECK(time.OnCyc(0x100, 0) == TimeStatus::kOk);
  CHECK(time.lost_cyc() == 1);
  CHECK(Tsc(time) == 0xa0018);
  calibration.OnCyc(0x100);

  // 0x100 cycles over one MTC period of 0x10 CTC = 0x40 TSC ticks: 0.25 TSC ticks per cycle.
  time.OnMtc(0x3);
  calibration.OnMtc(0x3);
  REQUIRE(calibration.Fcr(fcr) == TimeStatus::kOk);
  CHECK(fcr == 0x40);
  CHECK(time.lost_cyc() == 0);
  CHECK(Tsc(time) == 0xa0058);
  CHECK(time.OnCyc(0x100, fcr) == TimeStatus::kOk);
  CHECK(Tsc(time) == 0xa0098);
  time.OnMtc(0x4);
  CHECK(Tsc(time) == 0xa0098);
}

TEST_CASE("a CYC spanning MTC periods keeps only the current period's share") {
  const TimingParams params = Timing(4, 1, 4);
  TimeTracker time(params);
  time.OnTsc(0xa0000);
  time.OnTma(0x18, 0x8);
  time.OnMtc(0x2);
  time.OnMtc(0x3);  // no CYC in between: the cycle count restarts at MTC 2
  // fcr 0x40 (0.25): one MTC period (0x40 TSC ticks) is 0x100 cycles; of 0x180 cycles,
  // 0x80 belong to the current period: 0x20 TSC ticks.
  REQUIRE(time.OnCyc(0x180, 0x40) == TimeStatus::kOk);
  CHECK(Tsc(time) == 0xa0058 + 0x20);
}

TEST_CASE("calibration from the nominal frequency and a CBR") {
  TimingParams params = Timing(4, 1, 4);
  params.nom_freq = 4;
  TimeCalibration calibration(params);
  REQUIRE(calibration.OnCbr(2, true) == TimeStatus::kOk);
  uint64_t fcr = 0;
  REQUIRE(calibration.Fcr(fcr) == TimeStatus::kOk);
  CHECK(fcr == 0x200);  // 4 / 2 = 2.0 TSC ticks per cycle
  CHECK(calibration.OnCbr(0, true) == TimeStatus::kBadPacket);

  params.nom_freq = 0;  // without the nominal frequency a CBR says nothing
  TimeCalibration unknown(params);
  unknown.OnCbr(2, true);
  CHECK(unknown.Fcr(fcr) == TimeStatus::kNoTime);
}

TEST_CASE("calibration between TSCs in PSB+, unless MTC is available") {
  const TimingParams params = Timing(4, 1, 4);
  TimeCalibration calibration(params);
  calibration.OnTsc(1000, false);
  calibration.OnCyc(100);
  REQUIRE(calibration.OnTsc(1400, true) == TimeStatus::kOk);
  uint64_t fcr = 0;
  REQUIRE(calibration.Fcr(fcr) == TimeStatus::kOk);
  CHECK(fcr == 0x400);  // 400 ticks / 100 cycles = 4.0

  TimeCalibration with_mtc(params);
  with_mtc.OnMtc(1);
  with_mtc.OnTsc(1000, false);
  with_mtc.OnCyc(100);
  with_mtc.OnTsc(1400, true);
  CHECK(with_mtc.Fcr(fcr) == TimeStatus::kNoTime);
}

TEST_CASE("SKL168: the first MTC after PSB is not trusted after lost MTCs") {
  TimingParams params = Timing(4, 1, 4);
  params.skl168 = true;
  TimeCalibration affected(params);
  affected.OnMtc(0x1);
  affected.OnCyc(0x10);
  affected.OnPsb();
  affected.OnMtc(0x3);  // two MTC periods: one MTC was lost around the PSB
  uint64_t fcr = 0;
  CHECK(affected.Fcr(fcr) == TimeStatus::kNoTime);

  params.skl168 = false;
  TimeCalibration unaffected(params);
  unaffected.OnMtc(0x1);
  unaffected.OnCyc(0x10);
  unaffected.OnPsb();
  unaffected.OnMtc(0x3);
  REQUIRE(unaffected.Fcr(fcr) == TimeStatus::kOk);
  CHECK(fcr == 0x800);  // 0x80 TSC ticks over 0x10 cycles
}

TEST_CASE("the errata of the CPU reach the timing parameters") {
  ptprof::pt::PtParams params;
  params.mtc_freq = 3;
  params.cpuid_0x15_eax = 2;
  params.cpuid_0x15_ebx = 100;
  CHECK(!TimingParamsFor(params).skl168);
  params.cpu = PtCpu{6, 78, 3};  // Skylake: affected by SKL168
  const TimingParams timing = TimingParamsFor(params);
  CHECK(timing.skl168);
  CHECK(timing.mtc_freq == 3);
  CHECK(timing.cpuid_0x15_ebx == 100);
}

TEST_CASE("CTC deltas and conversion") {
  const TimingParams params = Timing(0, 3, 9);
  uint32_t delta = 0;
  CHECK(CtcDelta(0x10, 0xf0, params, delta) == TimeStatus::kOk);
  CHECK(delta == 0x20);
  CHECK(CtcDelta(0x10, 0x200, params, delta) == TimeStatus::kBadPacket);
  uint64_t tsc = 0;
  CHECK(CtcToTsc(0x20, params, tsc) == TimeStatus::kOk);
  CHECK(tsc == 0x60);
}

TEST_CASE("CtcTicks converts as CtcToTsc, keeping the last conversion") {
  const TimingParams params = Timing(0, 3, 9);
  CtcTicks ticks;
  for (const uint64_t ctc : {0x20u, 0x20u, 0x21u, 0x20u, 0u, 0u, 0x12345u}) {
    uint64_t kept = 0, fresh = 0;
    CHECK(ticks.Convert(ctc, params, kept) == CtcToTsc(ctc, params, fresh));
    CHECK(kept == fresh);
  }
  const TimingParams unusable = Timing(0, 0, 0);
  CtcTicks never;
  uint64_t tsc = 7;
  CHECK(never.Convert(0x20, unusable, tsc) == TimeStatus::kBadConfig);
  CHECK(never.Convert(0x20, unusable, tsc) == TimeStatus::kBadConfig);  // nothing was kept
}
