#pragma once
// The options with which `ptprof decode` shows one part of the flow: --interval ID (a delta
// interval, found by running the same --pair/--pattern/--per-thread profile first), or
// --around OFFSET|TIME (the --context events before and after the first event at a trace offset,
// or at a time given with an "ns" suffix, in the unit `ptprof delta` reports).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "src/analyses/delta/flow_window.h"
#include "src/cli/delta_run.h"
#include "src/pipeline/session.h"

namespace ptprof::cli {

struct WindowOptions {
  PairOptions pair;
  uint64_t interval = 0;  // 0: none
  std::string around;
  size_t context = 20;
  bool Any() const { return interval != 0 || !around.empty(); }
};

void AddWindowOptions(CLI::App& app, WindowOptions& options);

// The window in front of `next`, or null when no window option was given. Returns the exit status
// (kExitOk, or a usage / bad-input error it has reported on stderr).
int MakeFlowWindow(const WindowOptions& options, const Session& session,
                   const std::vector<size_t>& selected, const std::string& input, EventSink& next,
                   std::unique_ptr<delta::FlowWindow>& window);

}  // namespace ptprof::cli
