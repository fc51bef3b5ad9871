#pragma once
// PtraceStepper answers "which instructions did this program execute, in order?" by running it
// under ptrace and single-stepping every user-mode instruction. It is exact but slow (tens of
// thousands of steps per second, FACTS.md), so it serves small programs: ptprof's sample traces and
// an oracle for the faster recorders. Single-stepping over `syscall` stops once, after it returns.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "src/model/result.h"

namespace ptprof::record {

struct StepperOptions {
  std::vector<std::string> argv;   // program and arguments; argv[0] is looked up in PATH
  uint64_t max_steps = 50'000'000; // stop (and kill the program) after this many instructions
  bool quiet_child = false;        // send the program's stdout/stderr to /dev/null
};

struct StepperResult {
  uint64_t steps = 0;
  int exit_status = 0;      // the program's exit status when it exited
  bool killed = false;      // the program was killed after max_steps
  int signal = 0;           // the signal that ended the program, if any
};

// Called before each instruction executes with its address and the 16 bytes of code found there
// (fewer near the end of a mapping: `size` says how many). Returning an error stops the run.
using OnInstruction = std::function<Status(uint64_t ip, const uint8_t* code, size_t size)>;

Result<StepperResult> RunSingleStepped(const StepperOptions& options, const OnInstruction& on_insn);

}  // namespace ptprof::record
