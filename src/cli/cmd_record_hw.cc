#include "src/cli/cmd_record_hw.h"

#include <string>

#include "src/cli/command.h"
#include "src/record/intel_pt/hw_refusal.h"

namespace ptprof::cli {

int RunRecordHardware(const RecordOptions& options) {
  // No hardware recorder runs without its PMU: say exactly what is missing and what works.
  record::hw::ReadinessQuery query = record::hw::DefaultQuery(options.backend);
  for (const std::string& text : options.snapshot_on)
    query.needs_tracepoints = query.needs_tracepoints || text.rfind("syscall", 0) == 0;
  const record::hw::HardwareReadiness ready = record::hw::CheckHardware(query);
  if (!ready.ready)
    return ReportBadInput("record --backend " + options.backend + ": " + ready.reason + "; " +
                          ready.alternative);
  return ReportBadInput("record --backend " + options.backend + ": " + ready.reason +
                        " found, but this build of ptprof cannot record from it yet (see "
                        "docs/recording.md); " + ready.alternative);
}

}  // namespace ptprof::cli
