// The refusal messages on fake machines: this AMD VM, an Intel VM without PT, a PT machine with a
// high perf_event_paranoid.
#include "src/record/intel_pt/hw_refusal.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

using namespace ptprof::record::hw;
namespace fs = std::filesystem;

namespace {
std::string Fixture(const std::string& tree) {
  const char* dir = std::getenv("PTPROF_SYSFS_FIXTURES");
  return std::string(dir ? dir : "tests/fixtures/sysfs") + "/" + tree;
}
// A fake /proc with cpuinfo, perf_event_paranoid and self/status.
std::string FakeProc(const std::string& vendor, const std::string& model, bool vm, int paranoid,
                     const std::string& cap_eff) {
  fs::path dir = fs::temp_directory_path() / ("ptprof-proc-" + std::to_string(getpid()) + "-" +
                                              std::to_string(std::rand()));
  fs::create_directories(dir / "sys/kernel");
  fs::create_directories(dir / "self");
  std::ofstream(dir / "cpuinfo") << "processor\t: 0\nvendor_id\t: " << vendor
                                 << "\nmodel name\t: " << model << "\nflags\t\t: fpu tsc"
                                 << (vm ? " hypervisor" : "") << " sse2\n";
  std::ofstream(dir / "sys/kernel/perf_event_paranoid") << paranoid << "\n";
  std::ofstream(dir / "self/status") << "Name:\tptprof\nCapEff:\t" << cap_eff << "\n";
  return dir.string();
}
}  // namespace

TEST_CASE("no intel_pt PMU on an AMD VM: the reason and the alternatives") {
  ReadinessQuery q;
  q.backend = "intel_pt";
  q.sysfs_root = Fixture("amd-vm-6.18");
  q.proc_root = FakeProc("AuthenticAMD", "AMD EPYC 7B13", true, 2, "000001ffffffffff");
  HardwareReadiness r = CheckHardware(q);
  CHECK(!r.ready);
  CHECK(r.reason == "no intel_pt PMU in " + q.sysfs_root +
                        "/bus/event_source/devices (it has: breakpoint, msr, software, tracepoint, "
                        "uprobe): this is an AMD CPU (AMD EPYC 7B13, in a VM): Intel PT exists "
                        "only on Intel CPUs");
  CHECK(r.alternative.find("--backend qemu ") != std::string::npos);
  CHECK(r.alternative.find("qemu-system") != std::string::npos);
  CHECK(r.alternative.find("swbt") != std::string::npos);
  fs::remove_all(q.proc_root);
}

TEST_CASE("an Intel VM without PT passthrough, and cs_etm on x86") {
  ReadinessQuery q;
  q.backend = "intel_pt";
  q.sysfs_root = Fixture("amd-vm-6.18");
  q.proc_root = FakeProc("GenuineIntel", "Intel Xeon Gold 6148", true, 2, "0");
  CHECK(CheckHardware(q).reason.find("a VM on an Intel CPU (Intel Xeon Gold 6148) without PT "
                                     "passthrough") != std::string::npos);
  q.backend = "cs_etm";
  HardwareReadiness r = CheckHardware(q);
  CHECK(!r.ready);
  CHECK(r.reason.find("no cs_etm PMU in ") == 0);
  CHECK(r.reason.find("CoreSight ETM/ETE exists only on Arm CPUs") != std::string::npos);
  fs::remove_all(q.proc_root);
}

TEST_CASE("a PT machine: paranoid level against capabilities") {
  ReadinessQuery q;
  q.backend = "intel_pt";
  q.sysfs_root = Fixture("intel_pt-skylake-6.8");
  q.proc_root = FakeProc("GenuineIntel", "Intel Core i7-6700", false, 2, "0000000000000000");
  HardwareReadiness r = CheckHardware(q);
  CHECK(!r.ready);
  CHECK(r.reason == q.proc_root + "/sys/kernel/perf_event_paranoid is 2 and this process has "
                    "neither CAP_PERFMON nor CAP_SYS_ADMIN: per-CPU intel_pt tracing needs "
                    "perf_event_paranoid <= 1 (sysctl kernel.perf_event_paranoid=1) or `setcap "
                    "cap_perfmon+ep` on ptprof");
  fs::remove_all(q.proc_root);
  // CAP_PERFMON (bit 38) is enough.
  q.proc_root = FakeProc("GenuineIntel", "Intel Core i7-6700", false, 2, "0000004000000000");
  r = CheckHardware(q);
  CHECK(r.ready);
  CHECK(r.reason == "intel_pt PMU type 8 (14 format fields)");
  fs::remove_all(q.proc_root);
  q.proc_root = FakeProc("GenuineIntel", "Intel Core i7-6700", false, 0, "0");
  q.needs_kernel = true;
  CHECK(CheckHardware(q).ready);
  q.needs_tracepoints = true;
  CHECK(CheckHardware(q).reason.find("perf_event_paranoid <= -1") != std::string::npos);
  fs::remove_all(q.proc_root);
}
