#pragma once
// BuildEtmAttr answers "which perf_event_attr asks this kernel's cs_etm PMU for the ETMv4/ETE
// trace the user described, into which sink?" as a pure function of the PMU's sysfs (format/*,
// sinks/*) and the options, like the intel_pt builder. The sink is perf's `@NAME` (tmc_etr0): its
// sysfs file holds the 32-bit hash the kernel expects in the `sinkid` field (config2:0-31).
#include <cstdint>
#include <optional>
#include <string>

#include "src/model/result.h"
#include "src/record/intel_pt/pmu_sysfs.h"

namespace ptprof::record::hw {

struct EtmOptions {
  std::string sink;                       // "@tmc_etr0" or "tmc_etr0"; empty: an ETR, else the first
  bool timestamp = true;                  // timestamp packets (ETM_OPT_TS)
  bool contextid = true;                  // context ID packets (the pid) via the `contextid` alias
  bool cycacc = false;                    // cycle-accurate tracing
  std::optional<uint64_t> cc_threshold;   // cycle-count threshold (config3, needs cycacc)
  bool retstack = false;                  // return stack (returns compressed)
  bool branch_broadcast = false;          // every branch address, not only indirect ones
  bool user = true;
  bool kernel = false;
  bool per_cpu = true;
};

struct EtmAttr {
  HwAttr attr;
  std::string sink;      // the sink chosen
  uint64_t sink_hash = 0;
};

Result<EtmAttr> BuildEtmAttr(const PmuSysfs& pmu, const EtmOptions& options);

}  // namespace ptprof::record::hw
