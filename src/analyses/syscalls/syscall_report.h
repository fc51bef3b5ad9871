// The report of `ptprof syscalls`: per-syscall summaries or every instance (optionally with its
// kernel call tree), as text, JSON or CSV.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "src/analyses/syscalls/syscall_run.h"
#include "src/analyses/syscalls/syscall_summary.h"

namespace ptprof::syscalls {

struct SyscallReport {
  std::string input;
  const SyscallRun* run = nullptr;
  std::vector<const SyscallInstance*> instances;  // after the filters
  std::vector<SyscallSummary> summaries;          // of `instances`
  bool list_instances = false;
  bool trees = false;                             // text: each instance's kernel call tree
};

void WriteSyscallText(std::FILE* out, const SyscallReport& report);
void WriteSyscallJson(std::FILE* out, const SyscallReport& report);
void WriteSyscallCsv(std::FILE* out, const SyscallReport& report);

// "1.25 us"-style duration for text output.
std::string FormatNs(double ns);

}  // namespace ptprof::syscalls
