#pragma once
// RunDeltaOnSnapshot answers `ptprof delta` for an Arm CoreSight snapshot directory: its trace
// sources decode through decoders/etm into the same DeltaProfiler, the code bytes coming from the
// snapshot's memory dumps. Time is in the trace's timestamp ticks (no frequency is recorded).
#include <memory>
#include <string>
#include <vector>

#include "sideband/image_set.h"
#include "src/cli/delta_run.h"
#include "src/pipeline/session.h"

namespace ptprof::cli {

struct SnapshotDelta {
  DeltaRun run;
  std::shared_ptr<ExtractedFiles> files;  // the dumps as files, for the image set
  std::unique_ptr<ImageSet> images;        // outlives the profiler's cache
  std::vector<std::string> source_names;  // trace sources (ETM_0, ...)
  std::vector<int> source_cpus;           // and their cores' numbers
};

// `sources`: the trace sources to profile (--stream), empty for all.
Result<SnapshotDelta> RunDeltaOnSnapshot(const std::string& dir, const std::vector<std::string>& sources,
                                         const std::pair<patterns::Pattern, patterns::Pattern>& pair,
                                         bool per_thread, delta::IntervalKeeping keeping = {});

}  // namespace ptprof::cli
