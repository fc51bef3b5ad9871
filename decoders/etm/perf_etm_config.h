#pragma once
// PerfEtmConfig answers "how must the trace of one CPU of a cs_etm perf.data be decoded?": the
// SourceConfig for the trace unit registers perf stored in AUXTRACE_INFO (ETMv4 or ETE), with the
// architecture perf's own decoder assumes (Armv8-A for ETMv4, AArch64 with the ETE features for ETE).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "decoders/etm/source_config.h"

namespace ptprof::etm {

// `kind` is "ETMv4" or "ETE" (ETMv3 is not supported); `params` the registers by name.
Result<SourceConfig> SourceConfigFromPerf(const std::string& kind, int cpu,
                                          const std::vector<std::pair<std::string, uint64_t>>& params);

}  // namespace ptprof::etm
