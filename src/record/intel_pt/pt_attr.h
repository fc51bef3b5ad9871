#pragma once
// BuildIntelPtAttr answers "which perf_event_attr asks this kernel's intel_pt PMU for the trace
// the user described?" as a pure function of the PMU's sysfs (PmuSysfs) and the options, so
// every bit is unit-tested against fixture trees (tests/fixtures/sysfs/). Values are checked
// against caps/*: psb_periods, mtc_periods, cycle_thresholds bitmaps, psb_cyc, mtc,
// num_address_ranges. Defaults follow perf's intel_pt defaults: pt, branch, tsc, plus
// mtc with mtc_period=3 when caps/mtc, psb_period=3 when caps/psb_cyc.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "src/model/result.h"
#include "src/record/intel_pt/pmu_sysfs.h"

namespace ptprof::record::hw {

// One address filter in perf's syntax: ACTION ADDR[/SIZE][@FILE]
// (filter 0x1000/0x200@/bin/ls, start 0x4004d6@/bin/true, stop ..., tracestop ...).
struct AddressFilter {
  enum class Action { kFilter, kStart, kStop, kTraceStop };
  Action action = Action::kFilter;
  uint64_t start = 0;
  uint64_t size = 0;  // 0 for start/stop
  std::string file;   // empty: a kernel address
};

struct IntelPtOptions {
  std::optional<uint64_t> psb_period;     // 2^(N+11) bytes between PSBs (caps/psb_periods)
  std::optional<uint64_t> mtc_period;     // MTC every 2^N crystal ticks (caps/mtc_periods)
  std::optional<uint64_t> cyc_threshold;  // CYC packets, threshold 2^(N-1) (caps/cycle_thresholds)
  bool no_tsc = false;
  bool no_mtc = false;
  bool no_retcomp = false;
  bool branch = true;  // --no-branch: only timing and PSB+ packets
  bool user = true;
  bool kernel = false;
  std::vector<std::string> filters;  // --filter texts (each may hold several, comma-separated)
  bool per_cpu = true;   // events per CPU, inherited by the command's threads (else per thread)
  bool snapshot = true;  // AUX area in overwrite mode: cut at triggers
};

// "filter 0x1000/0x200@/bin/ls, start 0x10" -> filters; errors name the offset in the text.
Result<std::vector<AddressFilter>> ParseAddressFilters(const std::string& text);
// The text the kernel's PERF_EVENT_IOC_SET_FILTER takes for these filters.
std::string FormatAddressFilters(const std::vector<AddressFilter>& filters);

Result<HwAttr> BuildIntelPtAttr(const PmuSysfs& pmu, const IntelPtOptions& options);

// The sideband bits every AUX-tracing event shares (MMAP2, COMM, FORK/EXIT, SWITCH, ITRACE_START
// come with these; AUX and LOST always): sample_id_all with TID|TIME|CPU|IDENTIFIER.
void SetSidebandBits(perf_event_attr& attr, bool per_cpu);

}  // namespace ptprof::record::hw
