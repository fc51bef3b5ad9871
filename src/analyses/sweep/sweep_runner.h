#pragma once
// RunSweep answers "what does every workload cost under every configuration of the grid?" by
// running them: on the emulated backend (qemu) each workload runs ONCE under the recorder and the
// plugin's kept stream is re-encoded per configuration (the trace of the emulated backend depends
// only on the flow and the configuration), then counted (packets) and decoded (time resolution);
// on any other backend `ptprof record --backend B` runs per configuration and repetition, timed
// against untraced runs of the same program (real overhead). A failing workload or backend fails
// its rows with a message; the other rows are still produced.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "src/analyses/sweep/sweep_grid.h"
#include "src/analyses/sweep/sweep_row.h"
#include "src/analyses/sweep/sweep_workloads.h"

namespace ptprof::sweep {

struct SweepRequest {
  std::vector<Workload> workloads;
  std::vector<GridPoint> grid;
  std::string backend = "qemu";
  unsigned repeat = 3;           // timed runs per configuration (measured backends)
  std::string trace_dir;         // keep the traces there (empty: a temporary directory)
  std::string ptprof;            // the ptprof executable (other backends run `ptprof record`)
  uint32_t cycles_per_insn = 1;  // the emulated backend's cycle model
  std::function<void(const std::string&)> progress;  // one line per step, or empty
};

std::vector<SweepRow> RunSweep(const SweepRequest& request);

// The emulated backend, one workload (qemu_sweep.cc).
std::vector<SweepRow> RunQemuWorkload(const Workload& workload, const SweepRequest& request,
                                      const std::string& work_dir);
// Any backend `ptprof record` knows, one workload (external_sweep.cc).
std::vector<SweepRow> RunRecordWorkload(const Workload& workload, const SweepRequest& request,
                                        const std::string& work_dir);

// Rows for every grid point, all failed with `error`.
std::vector<SweepRow> FailedRows(const Workload& workload, const SweepRequest& request,
                                 const std::string& error);

// The nanoseconds per TSC tick of the emulated recorder (TSC at nom_freq 20 x 100 MHz).
inline constexpr double kEmulatedNsPerTick = 0.5;

}  // namespace ptprof::sweep
