#pragma once
// TracedLaunch answers "how does a native recorder start a program so that nothing it does escapes
// the triggers?": the program is forked and exec'd under ptrace, which stops it right after
// execve, before its first instruction (and before the dynamic loader runs); the recorder opens its
// events on the stopped process, resolves addr=SYMBOL triggers against the executable now mapped,
// and lets it go (PTRACE_DETACH). WatchUntilExit then polls the triggers until the program ends.
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "src/model/result.h"
#include "src/record/triggers/live_triggers.h"
#include "src/record/triggers/trigger_engine.h"

namespace ptprof::record::triggers {

struct LaunchSpec {
  std::vector<std::string> argv;
  std::vector<std::pair<std::string, std::string>> env;  // set in the child before execve
};

// The child, stopped after execve. Fails (nothing left running) when it cannot be started.
Result<pid_t> LaunchStoppedAtExec(const LaunchSpec& spec);
// Lets the stopped child run.
Status ResumeLaunched(pid_t pid);

// Resolves every addr=SYMBOL trigger of `engine` through the symbols of the executable `pid`
// runs (/proc/PID/exe at its load address from /proc/PID/maps). Errors name the symbol.
Status ResolveAddressTriggers(pid_t pid, TriggerEngine& engine);

struct WatchResult {
  int exit_status = -1;  // when the program exited
  int signal = 0;        // when a signal ended it
  std::vector<SnapshotDecision> decisions;
  uint64_t lost = 0;     // trigger events the kernel dropped
};

// Polls `live` (may be null) every `poll_ms` until `pid` ends; the terminal's ^C goes to the
// program, not to ptprof.
WatchResult WatchUntilExit(pid_t pid, LiveTriggers* live, int poll_ms);

}  // namespace ptprof::record::triggers
