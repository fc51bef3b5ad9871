// Builds cs_etm AUXTRACE_INFO blocks from fixture sysfs trees (Juno ETMv4.0 registers as the
// OpenCSD Juno snapshots record them; an A55 ETMv4.2 device as simpleperf's perf_etm.data
// records it) and from a temporary ETE tree, and checks every word.
#include "src/record/cs_etm/etm_metadata.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

using namespace ptprof::record::hw;
namespace fs = std::filesystem;

namespace {
std::string Fixtures() {
  const char* dir = std::getenv("PTPROF_SYSFS_FIXTURES");
  return dir ? dir : "tests/fixtures/sysfs";
}
PmuSysfs Pmu(const std::string& tree) {
  auto pmu = ReadPmuSysfs(Fixtures() + "/" + tree, "cs_etm");
  REQUIRE(pmu);
  return *pmu;
}
uint64_t Param(const ptprof::perf::CsEtmCpu& cpu, const std::string& name) {
  for (const auto& [n, v] : cpu.params)
    if (n == name) return v;
  FAIL("no parameter " << name);
  return 0;
}
void Write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text << "\n";
}
}  // namespace

TEST_CASE("TRCCONFIGR follows the attr's ETM_OPT bits") {
  CHECK(EtmConfigRegister(0) == 0);
  CHECK(EtmConfigRegister(1ull << 14) == 0x40);                     // context ID
  CHECK(EtmConfigRegister((1ull << 14) | (1ull << 28)) == 0x840);  // + timestamps
  CHECK(EtmConfigRegister(1ull << 12) == 0x10);                     // cycle accurate
  CHECK(EtmConfigRegister(1ull << 29) == 0x1000);                   // return stack
  CHECK(EtmConfigRegister(1ull << 8) == 0x8);                       // branch broadcast
  CHECK(EtmConfigRegister(1ull << 15) == 0x8080);                   // VMID holds the pid
  CHECK(EtmConfigRegister(0xf) == 0);                               // preset: not a register bit
}

TEST_CASE("Juno: six ETMv4.0 units with their ID registers and ts_source") {
  PmuSysfs pmu = Pmu("cs_etm-juno-6.8");
  CHECK(EtmCpus(pmu) == std::vector<int>{0, 1, 2, 3, 4, 5});
  auto info = BuildCsEtmInfo(pmu, (1ull << 14) | (1ull << 28), true, {});
  REQUIRE(info);
  CHECK(info->header_version == 1);
  CHECK(info->pmu_type == 9);
  CHECK(info->nr_cpus == 6);
  CHECK(info->snapshot);
  REQUIRE(info->cpus.size() == 6);
  const auto& cpu4 = info->cpus[4];
  CHECK(cpu4.kind == ptprof::perf::CsEtmCpu::Kind::kEtmV4);
  CHECK(cpu4.cpu == 4);
  REQUIRE(cpu4.params.size() == 8);
  CHECK(cpu4.params[0].first == "TRCCONFIGR");
  CHECK(Param(cpu4, "TRCCONFIGR") == 0x840);
  CHECK(Param(cpu4, "TRCTRACEIDR") == 0x18);  // legacy: 0x10 + 2 * 4, as the snapshot's ETM_4
  CHECK(Param(cpu4, "TRCIDR0") == 0x28000ea1);
  CHECK(Param(cpu4, "TRCIDR1") == 0x4100f400);
  CHECK(Param(cpu4, "TRCIDR2") == 0x488);
  CHECK(Param(cpu4, "TRCIDR8") == 0);
  CHECK(Param(cpu4, "TRCAUTHSTATUS") == 0xcc);
  CHECK(Param(cpu4, "TS_SOURCE") == 1);
}

TEST_CASE("trace IDs from AUX_OUTPUT_HW_ID replace the legacy ones") {
  auto info = BuildCsEtmInfo(Pmu("cs_etm-juno-6.8"), 0, false, {{1, 0x2a}});
  REQUIRE(info);
  CHECK(Param(info->cpus[0], "TRCTRACEIDR") == 0x10);
  CHECK(Param(info->cpus[1], "TRCTRACEIDR") == 0x2a);
  CHECK(!info->snapshot);
}

TEST_CASE("a kernel without ts_source: all ones, as perf writes it") {
  auto info = BuildCsEtmInfo(Pmu("cs_etm-a55-5.15"), 1ull << 14, false, {});
  REQUIRE(info);
  CHECK(info->nr_cpus == 8);
  CHECK(Param(info->cpus[7], "TS_SOURCE") == ~0ull);
  CHECK(Param(info->cpus[7], "TRCTRACEIDR") == 0x1e);
  CHECK(Param(info->cpus[7], "TRCIDR1") == 0x4100f422);
}

TEST_CASE("ETE, ETMv3 and missing registers") {
  const fs::path root = fs::temp_directory_path() / ("ptprof-etm-meta-" + std::to_string(getpid()));
  const fs::path pmu_dir = root / "bus/event_source/devices/cs_etm";
  Write(pmu_dir / "type", "11");
  Write(pmu_dir / "format/timestamp", "config:28");
  Write(pmu_dir / "cpu0/trcidr/trcidr0", "0x2801cea1");
  Write(pmu_dir / "cpu0/trcidr/trcidr1", "0x4100fff0");
  Write(pmu_dir / "cpu0/trcidr/trcidr2", "0xd0001088");
  Write(pmu_dir / "cpu0/trcidr/trcidr8", "0x0");
  Write(pmu_dir / "cpu0/mgmt/trcauthstatus", "0xcc");
  Write(pmu_dir / "cpu0/mgmt/trcdevarch", "0x47705a13");  // ARCHVER 5: ETE
  Write(pmu_dir / "cpu0/ts_source", "-1");
  auto pmu = ReadPmuSysfs(root.string(), "cs_etm");
  REQUIRE(pmu);
  auto info = BuildCsEtmInfo(*pmu, 0, false, {});
  REQUIRE(info);
  REQUIRE(info->cpus.size() == 1);
  CHECK(info->cpus[0].kind == ptprof::perf::CsEtmCpu::Kind::kEte);
  REQUIRE(info->cpus[0].params.size() == 9);
  CHECK(Param(info->cpus[0], "TRCDEVARCH") == 0x47705a13);
  CHECK(info->cpus[0].params.back().first == "TS_SOURCE");
  CHECK(Param(info->cpus[0], "TS_SOURCE") == ~0ull);

  fs::remove(pmu_dir / "cpu0/trcidr/trcidr8");
  auto missing = BuildCsEtmInfo(*pmu, 0, false, {});
  REQUIRE(!missing);
  CHECK(missing.error().message.find("cpu0/trcidr/trcidr8: cannot read") != std::string::npos);

  fs::remove_all(pmu_dir / "cpu0/trcidr");
  Write(pmu_dir / "cpu0/mgmt/etmidr", "0x410cf250");
  auto v3 = BuildCsEtmInfo(*pmu, 0, false, {});
  REQUIRE(!v3);
  CHECK(v3.error().message.find("ETMv3/PTM") != std::string::npos);

  fs::remove_all(pmu_dir / "cpu0");
  auto none = BuildCsEtmInfo(*pmu, 0, false, {});
  REQUIRE(!none);
  CHECK(none.error().message.find("no CPU has a trace unit") != std::string::npos);
  fs::remove_all(root);
}
