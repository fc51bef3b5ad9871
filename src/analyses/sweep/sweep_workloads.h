#pragma once
// SweepWorkloads answers "which programs can a sweep run, and where are they?": the paper's
// micro-benchmarks built from tools/workloads (TailFact, Fib, ..., Omega, Epsilon, the Canny
// filter at -O0 and -O2), looked up by name (case-insensitive) in the workload directory, plus
// any program given by a path (it contains a '/').
#include <cstdint>
#include <string>
#include <vector>

#include "src/model/result.h"

namespace ptprof::sweep {

struct Workload {
  std::string name;    // as tables print it ("TailFact"); a path's file name for other programs
  std::string binary;  // the program to run
  std::string what;    // one line: what it exercises
};

struct KnownWorkload {
  const char* name;
  const char* binary;  // file name in the workload directory
  const char* what;
};
const std::vector<KnownWorkload>& KnownWorkloads();

// Loop iterations of Omega and Epsilon (tools/workloads/omega.c, epsilon.c).
inline constexpr uint64_t kOmegaEpsilonIterations = 2500000;

// Where the built workloads are: $PTPROF_SWEEP_WORKLOADS, else tools/workloads next to the
// running ptprof (the build tree), else ../lib/ptprof/workloads (an install).
std::string DefaultWorkloadDir();

// The workloads called `names` (every known one when empty), in the order given. An unknown name
// is an error listing the known ones. Binaries are not checked here: a missing one fails its rows.
Result<std::vector<Workload>> ResolveWorkloads(const std::vector<std::string>& names,
                                               const std::string& dir);

}  // namespace ptprof::sweep
