#include "decoders/etm/perf_etm_config.h"

#include <catch2/catch.hpp>

using namespace ptprof::etm;

TEST_CASE("perf's per-CPU ETMv4 registers become a source configuration") {
  auto cfg = SourceConfigFromPerf("ETMv4", 7, {{"TRCCONFIGR", 0x40}, {"TRCTRACEIDR", 0x1e},
                                               {"TRCIDR0", 0x28000ea1}, {"TRCIDR1", 0x4100f423},
                                               {"TRCIDR2", 0x20001088}, {"TRCAUTHSTATUS", 0x8c}});
  REQUIRE(cfg);
  CHECK(cfg->protocol == Protocol::kEtmV4);
  CHECK(cfg->trace_id == 0x1e);
  CHECK(cfg->cpu == 7);
  CHECK(cfg->source == "cpu7");
  CHECK(cfg->Reg("TRCIDR8") == 0);
  CHECK(cfg->arch.arch == ArchVersion::kV8);
}

TEST_CASE("perf configurations that cannot be decoded say why") {
  auto v3 = SourceConfigFromPerf("ETMv3/PTM", 0, {});
  REQUIRE(!v3);
  CHECK(v3.error().message == "cpu 0: ETMv3/PTM trace units are not supported (ETMv4 and ETE are)");
  auto missing = SourceConfigFromPerf("ETE", 2, {{"TRCCONFIGR", 0}});
  REQUIRE(!missing);
  CHECK(missing.error().message == "cpu 2: AUXTRACE_INFO has no TRCTRACEIDR");
}
