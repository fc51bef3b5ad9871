#pragma once
// RunDeltaOnPerfEtm answers `ptprof delta` for a perf.data holding cs_etm AUX trace: each selected
// AUX stream decodes through decoders/etm into the same DeltaProfiler, the code coming from the
// binaries of the file's executable mappings (--symfs, build-id cache, path). Time is in the
// trace's timestamp ticks (ETM timestamps carry no frequency).
#include <optional>
#include <string>
#include <vector>

#include "src/cli/delta_snapshot.h"
#include "src/cli/etm_perf_data.h"

namespace ptprof::cli {

// nullopt: `options.path` is not a cs_etm perf.data. Otherwise the profile (source_names are the
// AUX streams, source_cpus their CPUs), or the exit status of an error already reported.
std::optional<tl::expected<SnapshotDelta, int>> RunDeltaOnPerfEtm(
    const PerfEtmCommandOptions& options, const std::pair<patterns::Pattern, patterns::Pattern>& pair,
    bool per_thread, delta::IntervalKeeping keeping = {});

}  // namespace ptprof::cli
