#pragma once
// The CPU time the benchmarks read around a run: of every thread of the process, and of those
// the kernel's share (mostly clearing the fresh memory a cold decode fills).
#include <sys/resource.h>
#include <time.h>

namespace ptprof::bench {

inline double ProcessCpuSeconds() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

inline double ProcessSystemSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_stime.tv_usec) * 1e-6;
}

}  // namespace ptprof::bench
