// ptprof impact: what a tracer costs (docs/impact.md). Two recordings of the same program, without
// (--baseline) and with (--traced) the tracer: per syscall kind the extra instructions and time
// per call, the call paths that exist only with the tracer and their share, the same over the
// whole flow, and a summary paragraph; text or JSON.
#include <cstdio>
#include <memory>
#include <string>

#include "src/analyses/impact/impact_report.h"
#include "src/analyses/impact/tracer_impact.h"
#include "src/analyses/syscalls/syscall_run.h"
#include "src/cli/command.h"
#include "src/cli/input_options.h"

namespace ptprof::cli {

namespace {

struct ImpactCommandOptions {
  std::string baseline;
  std::string traced;
  std::string format = "text";
  size_t top = 8;
};

Result<syscalls::SyscallRun> RunOne(const std::string& input) {
  auto run = syscalls::RunSyscallsOnInput(input, RawInputOptions{}, false, {});
  if (!run) return run;
  for (const std::string& warning : run->warnings)
    std::fprintf(stderr, "ptprof: warning: %s\n", warning.c_str());
  return run;
}

int RunImpactCommand(const ImpactCommandOptions& options) {
  auto a = RunOne(options.baseline);
  if (!a) return ReportBadInput(a.error().message);
  auto b = RunOne(options.traced);
  if (!b) return ReportBadInput(b.error().message);
  impact::ImpactResult result = impact::CompareRuns(options.baseline, *a, options.traced, *b);
  if (result.kinds.empty())
    std::fprintf(stderr, "ptprof: impact: no syscall kind occurs in both recordings (%zu and %zu "
                         "syscalls): only the whole-flow comparison\n",
                 a->instances.size(), b->instances.size());
  if (options.format == "json")
    impact::WriteImpactJson(stdout, result, options.top);
  else
    impact::WriteImpactText(stdout, result, options.top);
  return kExitOk;
}

}  // namespace

Command AddImpactCommand(CLI::App& parent) {
  auto options = std::make_shared<ImpactCommandOptions>();
  CLI::App* app = parent.add_subcommand(
      "impact", "What a tracer costs: two recordings of the same program, without and with the "
                "tracer, compared per syscall and over the whole flow");
  app->add_option("--baseline", options->baseline, "the recording without the tracer (.ptar, "
                                                    "perf.data)")->required();
  app->add_option("--traced", options->traced, "the recording with the tracer")->required();
  app->add_option("--format", options->format, "text or json")
      ->check(CLI::IsMember({"text", "json"}));
  app->add_option("--top", options->top, "tracer-only paths and functions to list (default 8)");
  AddFlowDecodeOptions(*app);
  return {app, [options] { return RunImpactCommand(*options); }};
}

}  // namespace ptprof::cli
