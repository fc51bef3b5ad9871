// Builds cs_etm attrs against a copy of a real cs_etm sysfs layout and checks every bit.
#include "src/record/cs_etm/etm_attr.h"

#include <cstdlib>

#include <catch2/catch.hpp>

using namespace ptprof::record::hw;

namespace {
PmuSysfs Juno() {
  const char* dir = std::getenv("PTPROF_SYSFS_FIXTURES");
  auto pmu = ReadPmuSysfs(std::string(dir ? dir : "tests/fixtures/sysfs") + "/cs_etm-juno-6.8",
                          "cs_etm");
  REQUIRE(pmu);
  return *pmu;
}
// ETM_OPT_* of include/linux/coresight-pmu.h.
constexpr uint64_t kBranchBroadcast = 1ull << 8, kCycAcc = 1ull << 12, kCtxtId = 1ull << 14,
                   kTs = 1ull << 28, kRetStk = 1ull << 29;
}  // namespace

TEST_CASE("cs_etm sysfs: sinks and formats") {
  PmuSysfs pmu = Juno();
  CHECK(pmu.type == 9);
  CHECK(pmu.sinks.size() == 3);
  CHECK(pmu.formats.at("sinkid").word == FormatField::Word::kConfig2);
  CHECK(pmu.formats.at("cc_threshold").word == FormatField::Word::kConfig3);
}

TEST_CASE("default cs_etm attr: timestamps, context ids, the ETR sink") {
  auto a = BuildEtmAttr(Juno(), EtmOptions{});
  REQUIRE(a);
  CHECK(a->sink == "tmc_etr0");
  CHECK(a->sink_hash == 0x74b1ff0e);
  CHECK(a->attr.attr.type == 9);
  CHECK(a->attr.attr.config == (kTs | kCtxtId));
  CHECK(a->attr.attr.config2 == 0x74b1ff0e);
  CHECK(a->attr.config3 == 0);
  CHECK(a->attr.attr.exclude_kernel == 1);
  CHECK(a->attr.attr.sample_id_all == 1);
  CHECK(a->attr.attr.inherit == 1);
}

TEST_CASE("every ETM option lands on its bits") {
  EtmOptions o;
  o.sink = "@tmc_etf1";
  o.cycacc = true;
  o.cc_threshold = 0x100;
  o.retstack = true;
  o.branch_broadcast = true;
  o.timestamp = false;
  o.contextid = false;
  o.kernel = true;
  auto a = BuildEtmAttr(Juno(), o);
  REQUIRE(a);
  CHECK(a->sink == "tmc_etf1");
  CHECK(a->attr.attr.config == (kCycAcc | kRetStk | kBranchBroadcast));
  CHECK(a->attr.attr.config2 == 0x5c9f6e54);
  CHECK(a->attr.config3 == 0x100);
  CHECK(a->attr.attr.exclude_kernel == 0);
  o.cc_threshold = 0x1000;  // 13 bits into config3:0-11
  CHECK(BuildEtmAttr(Juno(), o).error().message.find("value 4096 does not fit in 12 bits") !=
        std::string::npos);
  o.cc_threshold = 4;
  o.cycacc = false;
  CHECK(!BuildEtmAttr(Juno(), o));
  o = {};
  o.sink = "@tmc_etr9";
  CHECK(BuildEtmAttr(Juno(), o).error().message ==
        Juno().dir + "/sinks/tmc_etr9: no such sink (this system has: tmc_etf0, tmc_etf1, tmc_etr0)");
}
