#include "src/record/intel_pt/hw_refusal.h"

#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "src/record/intel_pt/pmu_sysfs.h"

namespace ptprof::record::hw {

namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  if (in) text << in.rdbuf();
  return text.str();
}

// The value of "key\t: value" / "Key:\tvalue" lines of /proc files.
std::string Field(const std::string& text, const std::string& key) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.compare(0, key.size(), key) != 0) continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const size_t start = line.find_first_not_of(" \t", colon + 1);
    return start == std::string::npos ? "" : line.substr(start);
  }
  return "";
}

std::string Join(const std::vector<std::string>& names) {
  std::string text;
  for (const auto& n : names) text += (text.empty() ? "" : ", ") + n;
  return text.empty() ? "none" : text;
}

// Why the PMU directory is missing, from /proc/cpuinfo.
std::string WhyNoPmu(const ReadinessQuery& q) {
  const std::string cpuinfo = ReadAll(q.proc_root + "/cpuinfo");
  const std::string vendor = Field(cpuinfo, "vendor_id");
  const std::string flags = " " + Field(cpuinfo, "flags") + " ";
  const bool vm = flags.find(" hypervisor ") != std::string::npos;
  const std::string model = Field(cpuinfo, "model name");
  const std::string cpu = model.empty() ? (vendor.empty() ? "this CPU" : vendor) : model;
  if (q.backend == "intel_pt") {
    if (vendor == "AuthenticAMD" || vendor == "HygonGenuine")
      return fmt::format("this is an AMD CPU ({}{}): Intel PT exists only on Intel CPUs", cpu,
                         vm ? ", in a VM" : "");
    if (vendor == "GenuineIntel" && vm)
      return fmt::format("this is a VM on an Intel CPU ({}) without PT passthrough (the "
                         "hypervisor does not expose CPUID leaf 0x14)", cpu);
    if (vendor == "GenuineIntel")
      return fmt::format("{}: no intel_pt PMU: the CPU predates PT (Broadwell) or the kernel lacks "
                         "CONFIG_PERF_EVENTS_INTEL_PT", cpu);
    return fmt::format("{} is not an x86 Intel CPU: Intel PT exists only on Intel CPUs", cpu);
  }
  if (!vendor.empty() && Field(cpuinfo, "CPU implementer").empty())
    return fmt::format("this is an x86 CPU ({}{}): CoreSight ETM/ETE exists only on Arm CPUs", cpu,
                       vm ? ", in a VM" : "");
  return "no cs_etm PMU: the kernel lacks CONFIG_CORESIGHT (with an ETM4x/ETE source and a sink) "
         "or the device tree/ACPI does not describe the trace hardware";
}

bool HasCapability(const std::string& status, int bit) {
  const std::string eff = Field(status, "CapEff");
  if (eff.empty()) return false;
  const uint64_t caps = std::strtoull(eff.c_str(), nullptr, 16);
  return (caps >> bit) & 1;
}

}  // namespace

ReadinessQuery DefaultQuery(const std::string& backend) {
  ReadinessQuery q;
  q.backend = backend;
  q.sysfs_root = SysfsRoot();
  const char* proc = std::getenv("PTPROF_PROC_ROOT");
  q.proc_root = proc && *proc ? proc : "/proc";
  return q;
}

HardwareReadiness CheckHardware(const ReadinessQuery& q) {
  HardwareReadiness out;
  out.alternative =
      q.backend == "intel_pt"
          ? "use --backend qemu (emulated Intel PT of a user program, any x86-64 machine), "
            "--backend qemu-system (the kernel lab, docs/lab.md) or --backend swbt (software "
            "branch tracing with breakpoints)"
          : "use --backend qemu or qemu-system (emulated Intel PT on x86-64), or record on an Arm "
            "machine with CoreSight and decode the archive here";
  const std::string devices = q.sysfs_root + "/bus/event_source/devices";
  auto pmu = ReadPmuSysfs(q.sysfs_root, q.backend);
  if (!pmu) {
    out.reason = fmt::format("no {} PMU in {} (it has: {}): {}", q.backend, devices,
                             Join(ListPmus(q.sysfs_root)), WhyNoPmu(q));
    return out;
  }
  if (q.backend == "cs_etm" && pmu->sinks.empty()) {
    out.reason = fmt::format("{}/sinks is empty: no CoreSight sink (ETR/ETF/TRBE) is registered",
                             pmu->dir);
    return out;
  }
  // perf_event_paranoid: 2 allows user-space only per-thread, 1 adds kernel, 0 per-CPU, -1 all;
  // CAP_PERFMON (38) or CAP_SYS_ADMIN (21) lifts it.
  const std::string paranoid_text = ReadAll(q.proc_root + "/sys/kernel/perf_event_paranoid");
  const int paranoid = paranoid_text.empty() ? 2 : std::atoi(paranoid_text.c_str());
  const std::string status = ReadAll(q.proc_root + "/self/status");
  const bool capable = HasCapability(status, 38) || HasCapability(status, 21);
  const int needed = q.needs_tracepoints ? -1 : (q.needs_kernel ? 0 : 1);
  if (!capable && paranoid > needed) {
    out.reason = fmt::format(
        "{}/sys/kernel/perf_event_paranoid is {} and this process has neither CAP_PERFMON nor "
        "CAP_SYS_ADMIN: per-CPU {} tracing{} needs perf_event_paranoid <= {} (sysctl "
        "kernel.perf_event_paranoid={}) or `setcap cap_perfmon+ep` on ptprof",
        q.proc_root, paranoid, q.backend, q.needs_tracepoints ? " with syscall tracepoints" : "",
        needed, needed);
    out.alternative = "lower perf_event_paranoid or grant CAP_PERFMON, or " + out.alternative;
    return out;
  }
  if (q.needs_tracepoints) {
    struct stat st {};
    const std::string tracing = q.sysfs_root + "/kernel/tracing";
    if (stat((tracing + "/events/raw_syscalls").c_str(), &st) != 0 &&
        stat((q.sysfs_root + "/kernel/debug/tracing/events/raw_syscalls").c_str(), &st) != 0 &&
        !capable) {
      out.reason = fmt::format("tracefs is not mounted at {} and mounting it needs CAP_SYS_ADMIN "
                               "(mount -t tracefs nodev {})", tracing, tracing);
      return out;
    }
  }
  out.ready = true;
  out.reason = fmt::format("{} PMU type {} ({} format fields)", q.backend, pmu->type,
                           pmu->formats.size());
  return out;
}

}  // namespace ptprof::record::hw
