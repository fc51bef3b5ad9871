#pragma once
// ptprof record --backend intel_pt|cs_etm: records with the CPU's own trace hardware through
// perf_event_open (src/record/intel_pt, src/record/cs_etm), or says exactly why it cannot on this
// machine and which backend would work instead (docs/recording.md).
#include "src/cli/record_options.h"

namespace ptprof::cli {

int RunRecordHardware(const RecordOptions& options);

}  // namespace ptprof::cli
