// SyscallSummary answers "per syscall, how many, how slow, how many instructions?": count and the
// distribution (min, quartiles, p50, p99, max, mean) of latency and instructions over the
// instances of each syscall name.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "src/analyses/syscalls/syscall_tracker.h"

namespace ptprof::syscalls {

struct Distribution {
  uint64_t count = 0;
  uint64_t min = 0, q1 = 0, p50 = 0, q3 = 0, p99 = 0, max = 0;
  double mean = 0;
};

// Nearest-rank percentiles of `values` (any order).
Distribution Distribute(std::vector<uint64_t> values);

struct SyscallSummary {
  std::string name;
  int64_t number = -1;
  uint64_t count = 0;
  uint64_t kernel_traced = 0;  // instances whose kernel side is in the trace
  Distribution latency_ns;
  Distribution kernel_insns;
  Distribution user_insns;
};

// One summary per name, most frequent first (then by name).
std::vector<SyscallSummary> Summarize(const std::vector<SyscallInstance>& instances);
std::vector<SyscallSummary> Summarize(const std::vector<const SyscallInstance*>& instances);

}  // namespace ptprof::syscalls
