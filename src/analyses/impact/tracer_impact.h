// TracerImpact answers "what does my tracer cost?" from two recordings of the same program, one
// without the tracer (baseline, A) and one with it (traced, B): per syscall kind present in both,
// the extra instructions and nanoseconds per call (each B instance against A's median: mean,
// median, quartiles, min, max), the call paths that exist only with the tracer with their share of
// the extra instructions, and the instructions in functions that never run in the baseline. The
// same comparison over the whole flow covers user-space tracers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "src/analyses/support/call_tree.h"
#include "src/analyses/syscalls/syscall_run.h"
#include "src/analyses/syscalls/syscall_summary.h"

namespace ptprof::impact {

// A signed distribution (B's instances minus A's median).
struct Extra {
  double mean = 0;
  int64_t min = 0, q1 = 0, median = 0, q3 = 0, max = 0;
};

// Code that runs only with the tracer: a call path whose outermost new frame is `name` (summed
// over every place it is called from), or a function that never runs in the baseline.
struct TracerCode {
  std::string name;
  uint64_t places = 0;      // distinct call paths (paths) or callers
  uint64_t insns = 0;       // total (paths: including callees; functions: self) in B
  double insns_per_call = 0;
  double share_of_extra = 0;  // insns_per_call / extra instructions per call (0 when no extra)
};

struct KindImpact {
  std::string name;
  int64_t number = -1;
  uint64_t count_a = 0, count_b = 0;
  bool kernel_traced = false;  // both sides have the kernel side: instruction counts are kernel's
  syscalls::Distribution insns_a, insns_b;      // kernel instructions (else user) per call
  syscalls::Distribution latency_a, latency_b;  // ns per call
  Extra extra_insns, extra_ns;
  std::vector<TracerCode> tracer_paths;       // largest first
  uint64_t tracer_path_insns = 0;             // sum over tracer_paths
  std::vector<TracerCode> tracer_functions;   // largest first
  uint64_t tracer_function_insns = 0;         // sum of their self instructions in this kind
};

// One function's calls (frames entered) and self instructions in both runs, over the whole flow.
struct FunctionChange {
  std::string name;
  uint64_t calls_a = 0, calls_b = 0;
  uint64_t insns_a = 0, insns_b = 0;  // self
};

struct ImpactResult {
  std::string baseline, traced;
  bool timed = false;
  std::vector<KindImpact> kinds;           // syscall kinds in both, most frequent first
  std::vector<std::string> only_in_a, only_in_b;  // syscall kinds in one run only
  uint64_t insns_a = 0, insns_b = 0;       // whole flow
  uint64_t syscalls_a = 0, syscalls_b = 0;
  std::vector<TracerCode> flow_tracer_paths;      // whole flow, largest first
  uint64_t flow_tracer_path_insns = 0;
  std::vector<TracerCode> flow_tracer_functions;  // whole flow
  uint64_t flow_tracer_function_insns = 0;
  std::vector<FunctionChange> functions;   // every function, largest instruction change first
  std::string summary;                     // one paragraph in words with the numbers
};

ImpactResult CompareRuns(const std::string& baseline, const syscalls::SyscallRun& a,
                         const std::string& traced, const syscalls::SyscallRun& b);

// The paths of `b` absent from `a` whose parent path is in `a` (the outermost new frames), grouped
// by that frame's name; `calls` divides into per-call numbers.
std::vector<TracerCode> NewPaths(const CallTree& a, const CallTree& b, uint64_t calls,
                                 double extra_per_call);
// Every function (node name) of either tree with its calls and self instructions in both,
// largest change in self instructions first.
std::vector<FunctionChange> FunctionChanges(const CallTree& a, const CallTree& b);
// The functions (node names) of `b` that `names_a` never has, with their self instructions.
std::vector<TracerCode> NewFunctions(const std::vector<std::string>& names_a, const CallTree& b,
                                     uint64_t calls, double extra_per_call);

}  // namespace ptprof::impact
