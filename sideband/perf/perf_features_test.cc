#include "sideband/perf/perf_features.h"

#include <catch2/catch.hpp>

#include "sideband/perf/perf_abi.h"
#include "sideband/perf/perf_test_bytes.h"

using namespace ptprof::perf;
using namespace ptprof::perf::testing;

TEST_CASE("feature sections: strings, counts, pmu mappings, build ids") {
  PerfFeatures f;
  Bytes host;
  host.U32(8).Str("box", 8);
  REQUIRE(ParseFeatureSection(kFeatHostname, host.data, 0x1000, f));
  CHECK(f.hostname == "box");
  Bytes cpus;
  cpus.U32(8).U32(4);
  REQUIRE(ParseFeatureSection(kFeatNrCpus, cpus.data, 0x1000, f));
  CHECK(*f.nr_cpus_online == 4);
  Bytes cmd;
  cmd.U32(2).U32(8).Str("perf", 8).U32(8).Str("record", 8);
  REQUIRE(ParseFeatureSection(kFeatCmdline, cmd.data, 0, f));
  CHECK(f.cmdline == std::vector<std::string>{"perf", "record"});
  Bytes pmus;
  pmus.U32(1).U32(6).U32(16).Str("intel_pt", 16);
  REQUIRE(ParseFeatureSection(kFeatPmuMappings, pmus.data, 0, f));
  CHECK(f.pmu_mappings.at(6) == "intel_pt");
  Bytes ids;
  ids.U32(0).U16(1).U16(8 + 4 + 24 + 8).U32(0xffffffff);
  for (int i = 0; i < 20; ++i) ids.U8(static_cast<uint8_t>(i));
  ids.U32(0).Str("[k]", 8);
  REQUIRE(ParseFeatureSection(kFeatBuildId, ids.data, 0, f));
  REQUIRE(f.build_ids.size() == 1);
  CHECK(f.build_ids[0].build_id == "000102030405060708090a0b0c0d0e0f10111213");
  CHECK(f.build_ids[0].filename == "[k]");
  REQUIRE(ParseFeatureSection(77, {}, 0, f));  // unknown: listed only
  CHECK(f.present.back() == 77);
}

TEST_CASE("the auxtrace index in perf's and simpleperf's layouts") {
  PerfFeatures f;
  Bytes perf;
  perf.U64(2).U64(0x100).U64(0x40).U64(0x200).U64(0x80);
  REQUIRE(ParseFeatureSection(kFeatAuxtrace, perf.data, 0, f));
  REQUIRE(f.auxtrace_index.size() == 2);
  CHECK(f.auxtrace_index[1].file_offset == 0x200);
  PerfFeatures g;
  Bytes bare;
  bare.U64(0x26a8).U64(0x30);
  REQUIRE(ParseFeatureSection(kFeatAuxtrace, bare.data, 0, g));
  REQUIRE(g.auxtrace_index.size() == 1);
  CHECK(g.auxtrace_index[0].file_offset == 0x26a8);
}

TEST_CASE("malformed feature sections are errors naming feature and offset") {
  PerfFeatures f;
  Bytes host;
  host.U32(1000).Str("x", 4);
  auto s = ParseFeatureSection(kFeatHostname, host.data, 0x2000, f);
  REQUIRE_FALSE(s);
  CHECK(s.error().message.find("offset 0x2000") == 0);
  CHECK(s.error().message.find("hostname") != std::string::npos);
  Bytes list;
  list.U32(0xffffffff);
  CHECK_FALSE(ParseFeatureSection(kFeatCmdline, list.data, 0, f));
  Bytes ids;
  ids.U32(0).U16(0).U16(400).U32(0);
  CHECK_FALSE(ParseFeatureSection(kFeatBuildId, ids.data, 0, f));
}
