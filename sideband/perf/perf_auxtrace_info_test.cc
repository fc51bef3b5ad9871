#include "sideband/perf/perf_auxtrace_info.h"

#include <catch2/catch.hpp>

using namespace ptprof::perf;

TEST_CASE("intel_pt AUXTRACE_INFO: the private words of perf.data.intel_pt-4.14") {
  AuxtraceInfoRecord r;
  r.type = kAuxtraceIntelPt;
  r.priv = {6, 31, 1789569706, 18446744041015200657ULL, 1, 0x400, 0x800, 3, 0, 1, 0x200, 0x3c000, 100, 2, 2, 12, 0};
  auto pt = DecodeIntelPtInfo(r);
  REQUIRE(pt);
  CHECK(pt->pmu_type == 6);
  CHECK(pt->time_mult == 1789569706);
  CHECK(pt->tsc_bit == 0x400);
  CHECK(pt->noretcomp_bit == 0x800);
  CHECK(pt->mtc_freq_bits == 0x3c000);
  CHECK(pt->tsc_ctc_ratio_n == 100);
  CHECK(pt->tsc_ctc_ratio_d == 2);
  CHECK(pt->max_non_turbo_ratio == 12);
  CHECK(pt->per_cpu_mmaps);
  CHECK_FALSE(pt->snapshot_mode);
  CHECK(pt->filter.empty());
  r.priv[16] = 12;  // a filter string longer than the words that follow
  CHECK_FALSE(DecodeIntelPtInfo(r));
  r.priv.push_back(0x7274732f72746c66ULL);  // "fltr/str"
  r.priv.push_back(0x31);                   // "1"
  r.priv[16] = 9;
  REQUIRE(DecodeIntelPtInfo(r));
  CHECK(DecodeIntelPtInfo(r)->filter == "fltr/str1");
  r.priv.resize(5);
  CHECK_FALSE(DecodeIntelPtInfo(r));
}

TEST_CASE("intel_pt attr.config decodes into the PMU's format fields") {
  auto fields = DecodeIntelPtConfig(0x300e601);
  std::vector<std::pair<std::string, uint64_t>> expected = {
      {"pt", 1}, {"mtc", 1}, {"tsc", 1}, {"branch", 1}, {"mtc_period", 3}, {"cyc_thresh", 0}, {"psb_period", 3}};
  CHECK(fields == expected);
  auto odd = DecodeIntelPtConfig((1u << 11) | (uint64_t{1} << 40));
  CHECK(odd.front().first == "noretcomp");
  CHECK(odd.back().first == "config:40");
}

TEST_CASE("cs_etm AUXTRACE_INFO: per-CPU ETMv4 and ETE blocks") {
  AuxtraceInfoRecord r;
  r.type = kAuxtraceCsEtm;
  r.priv = {1, (uint64_t{8} << 32) | 2, 0,
            0x4040404040404040ULL, 0, 7, 0x40, 0x10, 0x28000ea1, 0x4100f422, 0x20001088, 0, 0x8c,
            0x5050505050505050ULL, 1, 8, 0x40, 0x12, 1, 2, 3, 4, 0xcc, 0x47724a13};
  auto etm = DecodeCsEtmInfo(r);
  REQUIRE(etm);
  CHECK(etm->pmu_type == 8);
  CHECK(etm->nr_cpus == 2);
  REQUIRE(etm->cpus.size() == 2);
  CHECK(etm->cpus[0].kind == CsEtmCpu::Kind::kEtmV4);
  CHECK(etm->cpus[0].params[1] == std::make_pair(std::string("TRCTRACEIDR"), uint64_t{0x10}));
  CHECK(etm->cpus[1].kind == CsEtmCpu::Kind::kEte);
  CHECK(etm->cpus[1].params.back().first == "TRCDEVARCH");
  r.priv[3] = 0x1234;  // bad magic
  CHECK_FALSE(DecodeCsEtmInfo(r));
  r.priv[3] = 0x4040404040404040ULL;
  r.priv[5] = 1000;  // more parameters than words
  CHECK_FALSE(DecodeCsEtmInfo(r));
  r.priv.resize(2);
  CHECK_FALSE(DecodeCsEtmInfo(r));
}
