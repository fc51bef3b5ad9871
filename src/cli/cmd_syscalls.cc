// ptprof syscalls: every syscall of a decoded flow (docs/syscalls.md): its name and number, thread,
// start, latency, user and kernel instructions and kernel call tree, or per-syscall summaries
// (count, p50/p99/max latency and instructions), in text, JSON or CSV.
#include <cmath>
#include <cstdio>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "sideband/syscall_table.h"
#include "src/analyses/syscalls/syscall_report.h"
#include "src/analyses/syscalls/syscall_run.h"
#include "src/analyses/syscalls/syscall_summary.h"
#include "src/cli/command.h"
#include "src/cli/input_options.h"

namespace ptprof::cli {

namespace {

struct SyscallsCommandOptions {
  std::string input;
  InputOptions in;
  std::string syscalls;     // --syscall NAME[,NAME]
  std::string min_latency;  // --min-latency DURATION
  std::string format = "text";
  bool instances = false;
  bool trees = false;
  bool verbose = false;
};

int UsageError(const std::string& message) {
  std::fprintf(stderr, "ptprof: syscalls: %s\n", message.c_str());
  return kExitUsage;
}

// "200us", "1.5ms", "300ns", "2s" or a bare number of nanoseconds.
Result<uint64_t> ParseDurationNs(const std::string& text) {
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (...) {
    return Fail("--min-latency '" + text + "': expected a duration such as 200us");
  }
  const std::string unit = text.substr(used);
  double scale = 0;
  if (unit.empty() || unit == "ns") scale = 1;
  else if (unit == "us") scale = 1e3;
  else if (unit == "ms") scale = 1e6;
  else if (unit == "s") scale = 1e9;
  if (scale == 0 || value < 0 || !std::isfinite(value))
    return Fail("--min-latency '" + text + "': expected a duration such as 200us (ns, us, ms, s)");
  return static_cast<uint64_t>(value * scale);
}

std::vector<std::string> SplitNames(const std::string& list) {
  std::vector<std::string> names;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    if (comma > start) names.push_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  return names;
}

std::string Join(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
  return text;
}

int RunSyscallsCommand(const SyscallsCommandOptions& options) {
  const std::vector<std::string> wanted = SplitNames(options.syscalls);
  for (const std::string& name : wanted)
    if (name != syscalls::kUnknownSyscall && !SyscallNumber(SyscallArch::kX86_64, name))
      return UsageError("--syscall '" + name + "': no such x86-64 syscall (near: " +
                        Join(NearSyscallNames(SyscallArch::kX86_64, name, 4)) + ")");
  uint64_t min_latency = 0;
  if (!options.min_latency.empty()) {
    auto parsed = ParseDurationNs(options.min_latency);
    if (!parsed) return UsageError(parsed.error().message);
    min_latency = *parsed;
  }
  auto raw = options.in.ToRawInput();
  if (!raw) return UsageError(raw.error().message);
  auto run = syscalls::RunSyscallsOnInput(options.input, *raw, options.in.AnyGiven(),
                                          options.in.streams);
  if (!run) return ReportBadInput(run.error().message);
  for (const std::string& warning : run->warnings)
    std::fprintf(stderr, "ptprof: warning: %s\n", warning.c_str());
  if (options.verbose)
    for (const std::string& note : run->decode_notes)
      std::fprintf(stderr, "ptprof: %s\n", note.c_str());
  if (min_latency && !run->timed)
    return ReportBadInput(options.input + ": --min-latency: the trace has no time base");

  syscalls::SyscallReport report;
  report.input = options.input;
  report.run = &*run;
  report.list_instances = options.instances || options.trees;
  report.trees = options.trees;
  const std::set<std::string> names(wanted.begin(), wanted.end());
  for (const syscalls::SyscallInstance& s : run->instances) {
    if (!names.empty() && !names.count(s.name)) continue;
    if (min_latency && (!s.time_known || s.latency_ns < min_latency)) continue;
    report.instances.push_back(&s);
  }
  report.summaries = syscalls::Summarize(report.instances);

  if (run->instances.empty())
    std::fprintf(stderr, "ptprof: syscalls: %s: no syscalls in the trace (%llu instructions "
                         "decoded)\n", options.input.c_str(),
                 static_cast<unsigned long long>(run->instructions));
  if (options.format == "json")
    syscalls::WriteSyscallJson(stdout, report);
  else if (options.format == "csv")
    syscalls::WriteSyscallCsv(stdout, report);
  else
    syscalls::WriteSyscallText(stdout, report);

  if (!names.empty()) {
    std::vector<std::string> missing;
    for (const std::string& name : wanted) {
      bool seen = false;
      for (const syscalls::SyscallInstance& s : run->instances) seen |= s.name == name;
      if (!seen) missing.push_back(name);
    }
    if (!missing.empty()) {
      std::fprintf(stderr, "ptprof: syscalls: %s: %s never occurs in the trace\n",
                   options.input.c_str(), Join(missing).c_str());
      return kExitBadInput;
    }
  }
  return kExitOk;
}

}  // namespace

Command AddSyscallsCommand(CLI::App& parent) {
  auto options = std::make_shared<SyscallsCommandOptions>();
  CLI::App* app = parent.add_subcommand(
      "syscalls", "Syscalls of a decoded flow: name, thread, latency, user and kernel "
                  "instructions and call tree per instance, or summaries per syscall");
  app->add_option("input", options->input, "raw Intel PT trace, perf.data or .ptar")->required();
  AddImageOptions(*app, options->in);
  AddPtOptions(*app, options->in);
  AddAddrFilterOption(*app, options->in);
  AddStreamOption(*app, options->in);
  AddBinarySearchOptions(*app, options->in);
  app->add_option("--syscall", options->syscalls,
                  "NAME[,NAME]: only these syscalls (x86-64 names; 'unknown' for unnamed ones)");
  app->add_option("--min-latency", options->min_latency,
                  "only syscalls at least this slow (e.g. 200us; ns, us, ms, s)");
  app->add_option("--format", options->format, "text, json or csv")
      ->check(CLI::IsMember({"text", "json", "csv"}));
  app->add_flag("--verbose", options->verbose,
                "say how each PT stream was decoded: in how many PSB segments, how many of them "
                "taken in parts on the decoding threads, or why sequentially");
  app->add_flag("--instances", options->instances, "one row per syscall instead of the summary");
  app->add_flag("--tree", options->trees, "with --instances: each syscall's kernel call tree "
                                          "(text; JSON always has it)");
  return {app, [options, app] {
            options->in.RecordImageOrder(*app);
            return RunSyscallsCommand(*options);
          }};
}

}  // namespace ptprof::cli
