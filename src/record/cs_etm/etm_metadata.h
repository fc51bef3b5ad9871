#pragma once
// EtmMetadata answers "what must a cs_etm perf.data say about each CPU's trace unit so that a
// decoder can read the trace?": the AUXTRACE_INFO block perf writes, one entry per CPU with an
// ETMv4 or ETE trace unit: TRCCONFIGR (derived from the attr, as the driver programs it), the
// trace ID the unit tags its data with, and the read-only ID registers the kernel publishes under
// SYSFS/bus/event_source/devices/cs_etm/cpuN/ (trcidr/trcidr0,1,2,8, mgmt/trcauthstatus,
// mgmt/trcdevarch for ETE, ts_source on Linux 5.19+). Trace IDs come from the sideband's
// AUX_OUTPUT_HW_ID records when the kernel sent them (Linux 6.4+ allocates them), else from the
// legacy fixed assignment 0x10 + 2 * cpu older kernels use.
#include <cstdint>
#include <map>
#include <vector>

#include "sideband/perf/perf_auxtrace_info.h"
#include "src/model/result.h"
#include "src/record/intel_pt/pmu_sysfs.h"

namespace ptprof::record::hw {

// ETM_OPT_* bits of attr.config (include/linux/coresight-pmu.h) -> TRCCONFIGR bits, as the
// ETMv4 driver sets them.
uint64_t EtmConfigRegister(uint64_t attr_config);

// The trace ID a kernel without dynamic allocation gives CPU `cpu`.
inline uint64_t LegacyEtmTraceId(int cpu) { return 0x10 + 2 * static_cast<uint64_t>(cpu); }

// The CPUs with a trace unit: the cpuN directories under the PMU's sysfs directory, ascending.
std::vector<int> EtmCpus(const PmuSysfs& pmu);

// One CPU's AUXTRACE_INFO block; fails naming the sysfs file that is missing or unreadable, or
// refusing ETMv3/PTM trace units.
Result<perf::CsEtmCpu> ReadEtmCpu(const PmuSysfs& pmu, int cpu, uint64_t trcconfigr,
                                  uint64_t trace_id);

// The whole AUXTRACE_INFO: every CPU of EtmCpus (trace IDs from `trace_ids`, else legacy).
Result<perf::CsEtmInfo> BuildCsEtmInfo(const PmuSysfs& pmu, uint64_t attr_config, bool snapshot,
                                       const std::map<int, uint64_t>& trace_ids);

}  // namespace ptprof::record::hw
