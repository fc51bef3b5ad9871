// Builds intel_pt attrs against copies of real sysfs layouts (tests/fixtures/sysfs) and checks
// every bit.
#include "src/record/intel_pt/pt_attr.h"

#include <cstdlib>

#include <catch2/catch.hpp>

using namespace ptprof::record::hw;

namespace {
std::string Fixture(const std::string& tree) {
  const char* dir = std::getenv("PTPROF_SYSFS_FIXTURES");
  return std::string(dir ? dir : "tests/fixtures/sysfs") + "/" + tree;
}
PmuSysfs Skylake() {
  auto pmu = ReadPmuSysfs(Fixture("intel_pt-skylake-6.8"), "intel_pt");
  REQUIRE(pmu);
  return *pmu;
}
PmuSysfs Broadwell() {
  auto pmu = ReadPmuSysfs(Fixture("intel_pt-broadwell-4.19"), "intel_pt");
  REQUIRE(pmu);
  return *pmu;
}
// Bits by the kernel's pt.c positions.
constexpr uint64_t kPt = 1ull << 0, kCyc = 1ull << 1, kMtc = 1ull << 9, kTsc = 1ull << 10,
                   kNoRetComp = 1ull << 11, kBranch = 1ull << 13;
constexpr uint64_t MtcPeriod(uint64_t n) { return n << 14; }
constexpr uint64_t CycThresh(uint64_t n) { return n << 19; }
constexpr uint64_t PsbPeriod(uint64_t n) { return n << 24; }
}  // namespace

TEST_CASE("sysfs format fields parse like the kernel prints them") {
  auto f = ParseFormatField("config:14-17", "f");
  REQUIRE(f);
  CHECK(f->word == FormatField::Word::kConfig);
  CHECK(f->ranges == std::vector<std::pair<unsigned, unsigned>>{{14, 17}});
  CHECK(f->Width() == 4);
  auto split = ParseFormatField("config1:0-3,8", "f");
  REQUIRE(split);
  CHECK(split->word == FormatField::Word::kConfig1);
  CHECK(split->Width() == 5);
  CHECK(ParseFormatField("config2:0-31", "f")->Width() == 32);
  CHECK(ParseFormatField("config3:0-11", "f")->word == FormatField::Word::kConfig3);
  CHECK(ParseFormatField("config:17-14", "x/format/y").error().message ==
        "x/format/y: 'config:17-14': offset 7: bad bit range '17-14'");
  CHECK(ParseFormatField("conf:1", "f").error().message == "f: 'conf:1': unknown attr word 'conf'");
}

TEST_CASE("the Skylake fixture reads as the kernel exposes it") {
  PmuSysfs pmu = Skylake();
  CHECK(pmu.type == 8);
  CHECK(pmu.formats.size() == 14);
  CHECK(pmu.CapHex("mtc_periods") == 0x249);
  CHECK(pmu.CapHex("psb_periods") == 0x3f);
  CHECK(pmu.CapDecimal("num_address_ranges") == 2);
  CHECK(ReadPmuSysfs(Fixture("amd-vm-6.18"), "intel_pt").error().message ==
        Fixture("amd-vm-6.18") + "/bus/event_source/devices/intel_pt/type: no such PMU");
}

TEST_CASE("default intel_pt attr: perf's defaults on this kernel's bits") {
  auto a = BuildIntelPtAttr(Skylake(), IntelPtOptions{});
  REQUIRE(a);
  CHECK(a->attr.type == 8);
  CHECK(a->attr.config == (kPt | kBranch | kTsc | kMtc | MtcPeriod(3) | PsbPeriod(3)));
  CHECK(a->attr.config == 0x300e601);
  CHECK(a->attr.config1 == 0);
  CHECK(a->attr.config2 == 0);
  CHECK(a->attr.exclude_kernel == 1);
  CHECK(a->attr.exclude_user == 0);
  CHECK(a->attr.exclude_hv == 1);
  CHECK(a->attr.disabled == 1);
  CHECK(a->attr.enable_on_exec == 1);
  CHECK(a->attr.inherit == 1);
  CHECK(a->attr.sample_id_all == 1);
  CHECK(a->attr.mmap2 == 1);
  CHECK(a->attr.comm == 1);
  CHECK(a->attr.task == 1);
  CHECK(a->attr.context_switch == 1);
  CHECK(a->attr.sample_type == (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                                PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER));
  CHECK(a->filter.empty());
}

TEST_CASE("every packet option lands on its bits") {
  const PmuSysfs pmu = Skylake();
  struct Case {
    const char* name;
    IntelPtOptions options;
    uint64_t config;
  };
  std::vector<Case> cases;
  auto add = [&](const char* name, auto edit, uint64_t config) {
    IntelPtOptions o;
    edit(o);
    cases.push_back({name, o, config});
  };
  const uint64_t base = kPt | kBranch | kTsc | kMtc | MtcPeriod(3) | PsbPeriod(3);
  add("no-tsc", [](IntelPtOptions& o) { o.no_tsc = true; }, kPt | kBranch | PsbPeriod(3));
  add("no-mtc", [](IntelPtOptions& o) { o.no_mtc = true; }, kPt | kBranch | kTsc | PsbPeriod(3));
  add("no-retcomp", [](IntelPtOptions& o) { o.no_retcomp = true; }, base | kNoRetComp);
  add("no-branch", [](IntelPtOptions& o) { o.branch = false; }, base & ~kBranch);
  for (uint64_t n : {0, 3, 6, 9})
    add("mtc-period", [n](IntelPtOptions& o) { o.mtc_period = n; },
        (base & ~MtcPeriod(15)) | MtcPeriod(n));
  for (uint64_t n = 0; n <= 5; ++n)
    add("psb-period", [n](IntelPtOptions& o) { o.psb_period = n; },
        (base & ~PsbPeriod(15)) | PsbPeriod(n));
  for (uint64_t n = 0; n <= 13; ++n)
    add("cyc-threshold", [n](IntelPtOptions& o) { o.cyc_threshold = n; },
        base | kCyc | CycThresh(n));
  add("everything", [](IntelPtOptions& o) {
        o.cyc_threshold = 1;
        o.psb_period = 0;
        o.mtc_period = 0;
        o.no_retcomp = true;
      }, kPt | kBranch | kTsc | kMtc | kCyc | CycThresh(1) | kNoRetComp);
  for (const Case& c : cases) {
    INFO(c.name);
    auto a = BuildIntelPtAttr(pmu, c.options);
    REQUIRE(a);
    CHECK(a->attr.config == c.config);
  }
}

TEST_CASE("values the CPU does not allow are refused with the caps file") {
  const PmuSysfs pmu = Skylake();
  IntelPtOptions o;
  o.mtc_period = 1;
  auto a = BuildIntelPtAttr(pmu, o);
  REQUIRE(!a);
  CHECK(a.error().message == "--mtc-period 1: " + pmu.dir +
                                 "/caps/mtc_periods is 0x249: this CPU allows 0,3,6,9");
  o = {};
  o.psb_period = 6;
  CHECK(BuildIntelPtAttr(pmu, o).error().message ==
        "--psb-period 6: " + pmu.dir + "/caps/psb_periods is 0x3f: this CPU allows 0,1,2,3,4,5");
  o = {};
  o.cyc_threshold = 14;
  CHECK(!BuildIntelPtAttr(pmu, o));
  o = {};
  o.user = false;
  CHECK(BuildIntelPtAttr(pmu, o).error().message ==
        "intel_pt: nothing to trace: --no-user without --trace-kernel");
}

TEST_CASE("user and kernel selection") {
  IntelPtOptions o;
  o.kernel = true;
  auto both = BuildIntelPtAttr(Skylake(), o);
  REQUIRE(both);
  CHECK(both->attr.exclude_kernel == 0);
  CHECK(both->attr.exclude_user == 0);
  o.user = false;
  o.per_cpu = false;
  auto kernel = BuildIntelPtAttr(Skylake(), o);
  REQUIRE(kernel);
  CHECK(kernel->attr.exclude_kernel == 0);
  CHECK(kernel->attr.exclude_user == 1);
  CHECK(kernel->attr.inherit == 0);
}

TEST_CASE("an older kernel on a first-generation PT CPU") {
  const PmuSysfs pmu = Broadwell();
  CHECK(pmu.type == 7);
  CHECK(!pmu.HasFormat("notnt"));
  auto a = BuildIntelPtAttr(pmu, IntelPtOptions{});
  REQUIRE(a);
  CHECK(a->attr.config == (kPt | kBranch | kTsc));  // no MTC, fixed PSB frequency
  IntelPtOptions o;
  o.psb_period = 2;
  CHECK(BuildIntelPtAttr(pmu, o).error().message ==
        "--psb-period: " + pmu.dir + "/caps/psb_cyc is 0: this CPU has a fixed PSB frequency");
  o = {};
  o.mtc_period = 3;
  CHECK(BuildIntelPtAttr(pmu, o).error().message ==
        "--mtc-period: " + pmu.dir + "/caps/mtc is 0 (this CPU has no MTC packets)");
  o = {};
  o.cyc_threshold = 1;
  CHECK(!BuildIntelPtAttr(pmu, o));
  o = {};
  o.filters = {"filter 0x1000/0x100@/bin/ls"};
  CHECK(BuildIntelPtAttr(pmu, o).error().message ==
        "--filter: 1 address filters but " + pmu.dir + "/caps/num_address_ranges is 0");
}

TEST_CASE("address filters in perf's syntax, validated against caps") {
  auto f = ParseAddressFilters("filter 0x1000/0x200@/bin/ls, start 0x4004d6@/bin/true");
  REQUIRE(f);
  REQUIRE(f->size() == 2);
  CHECK((*f)[0].action == AddressFilter::Action::kFilter);
  CHECK((*f)[0].start == 0x1000);
  CHECK((*f)[0].size == 0x200);
  CHECK((*f)[0].file == "/bin/ls");
  CHECK((*f)[1].action == AddressFilter::Action::kStart);
  CHECK((*f)[1].size == 0);
  CHECK(FormatAddressFilters(*f) == "filter 0x1000/0x200@/bin/ls,start 0x4004d6@/bin/true");
  auto stops = ParseAddressFilters("stop 4096@/bin/x,tracestop 0x10/16@/bin/x");
  REQUIRE(stops);
  CHECK(FormatAddressFilters(*stops) == "stop 0x1000@/bin/x,tracestop 0x10/0x10@/bin/x");
  CHECK(ParseAddressFilters("filter 0x1000@/bin/ls").error().message ==
        "--filter 'filter 0x1000@/bin/ls': offset 0: filter needs a size (ADDR/SIZE)");
  CHECK(ParseAddressFilters("start 0x10/0x20@/x").error().message ==
        "--filter 'start 0x10/0x20@/x': offset 0: start takes a single address, no size");
  CHECK(ParseAddressFilters("jump 0x10@/x").error().message ==
        "--filter 'jump 0x10@/x': offset 0: unknown action 'jump' (filter, start, stop, tracestop)");
  CHECK(ParseAddressFilters("filter main/0x10@/x").error().message ==
        "--filter 'filter main/0x10@/x': offset 7: 'main' is not an address (symbols: look them "
        "up with nm and give the address)");
  CHECK(!ParseAddressFilters("filter 0xffffffffffffff00/0x1000@/x"));

  const PmuSysfs pmu = Skylake();
  IntelPtOptions o;
  o.filters = {"filter 0x1000/0x200@/bin/ls", "tracestop 0x1100/0x10@/bin/ls"};
  auto a = BuildIntelPtAttr(pmu, o);
  REQUIRE(a);
  CHECK(a->filter == "filter 0x1000/0x200@/bin/ls,tracestop 0x1100/0x10@/bin/ls");
  o.filters.push_back("start 0x1@/bin/ls");
  CHECK(BuildIntelPtAttr(pmu, o).error().message ==
        "--filter: 3 address filters but " + pmu.dir + "/caps/num_address_ranges is 2");
  o = {};
  o.filters = {"filter 0xffffffff81000000/0x1000"};
  CHECK(BuildIntelPtAttr(pmu, o).error().message ==
        "--filter 'filter 0xffffffff81000000/0x1000': a filter without @FILE is a kernel address: "
        "add --kernel, or name the file the address is in");
  o.kernel = true;
  CHECK(BuildIntelPtAttr(pmu, o)->filter == "filter 0xffffffff81000000/0x1000");
  o.filters = {"filter 0x1000/0x10"};
  CHECK(BuildIntelPtAttr(pmu, o).error().message ==
        "--filter 'filter 0x1000/0x10': 0x1000 is not a kernel address: user-space filters need "
        "@FILE");
}
