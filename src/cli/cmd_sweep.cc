// ptprof sweep: runs workloads under a grid of Intel PT packet configurations and reports trace
// size, bandwidth, packet mix, decoded time resolution with the paper's TRF, and (on backends
// where it is real) runtime overhead. See docs/sweep.md.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "src/analyses/sweep/sweep_grid.h"
#include "src/analyses/sweep/sweep_metrics.h"
#include "src/analyses/sweep/sweep_runner.h"
#include "src/analyses/sweep/sweep_workloads.h"
#include "src/cli/command.h"
#include "src/report/sweep_report.h"
#include "src/report/sweep_svg.h"

namespace ptprof::cli {

namespace {

struct SweepOptions {
  std::vector<std::string> workloads;
  std::string psb = "4096";
  std::string mtc = "off";
  std::string cyc = "off";
  std::string tsc = "on";
  std::string grid = "product";
  std::string backend = "qemu";
  unsigned repeat = 3;
  uint32_t cycles_per_insn = 1;
  std::string format = "text";
  std::string svg_dir;
  std::string output_dir;
  std::string workload_dir;
  bool list = false;
};

int Usage(const std::string& message) {
  std::fprintf(stderr, "ptprof: sweep: %s\n", message.c_str());
  return kExitUsage;
}

std::string SelfPath() {
  char path[4096];
  ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  return n > 0 ? std::string(path, static_cast<size_t>(n)) : std::string("ptprof");
}

Status WriteText(const std::string& path, const std::string& text) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "w"), std::fclose);
  if (!f || std::fputs(text.c_str(), f.get()) < 0) return Fail(path + ": cannot write");
  return {};
}

int RunSweepCommand(const SweepOptions& options) {
  if (options.list) {
    for (const auto& w : sweep::KnownWorkloads()) std::printf("%-16s %s\n", w.name, w.what);
    return kExitOk;
  }
  sweep::GridLists lists;
  auto psb = sweep::ParseValueList(options.psb, "--psb-period", 1, uint64_t{1} << 30);
  if (!psb) return Usage(psb.error().message);
  auto mtc = sweep::ParseOptionalList(options.mtc, "--mtc-period", 0, 15);
  if (!mtc) return Usage(mtc.error().message);
  auto cyc = sweep::ParseOptionalList(options.cyc, "--cyc-threshold", 0, 15);
  if (!cyc) return Usage(cyc.error().message);
  auto tsc = sweep::ParseOnOffList(options.tsc, "--tsc");
  if (!tsc) return Usage(tsc.error().message);
  lists.psb = *psb;
  lists.mtc = *mtc;
  lists.cyc = *cyc;
  lists.tsc = *tsc;
  const auto mode = options.grid == "axes" ? sweep::GridMode::kAxes : sweep::GridMode::kProduct;
  sweep::SweepRequest request;
  request.grid = sweep::BuildGrid(lists, mode);
  if (request.grid.empty()) return Usage("the grid is empty (every list needs a value)");
  if (options.backend == "swbt" && request.grid.size() > 1)
    return Usage("--backend swbt has no packet configuration to sweep (give no lists of "
                 "several values)");
  const std::string dir =
      options.workload_dir.empty() ? sweep::DefaultWorkloadDir() : options.workload_dir;
  auto workloads = sweep::ResolveWorkloads(options.workloads, dir);
  if (!workloads) return Usage(workloads.error().message);
  request.workloads = *workloads;
  request.backend = options.backend;
  request.repeat = options.repeat;
  request.trace_dir = options.output_dir;
  request.ptprof = SelfPath();
  request.cycles_per_insn = options.cycles_per_insn;
  if (isatty(2))
    request.progress = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };

  SweepReport report;
  report.rows = sweep::RunSweep(request);
  sweep::ComputeTrf(report.rows);
  report.bounds = sweep::TraceSizeBounds(report.rows);
  report.branch_costs = sweep::EpsilonOmega(report.rows, sweep::kOmegaEpsilonIterations);

  if (options.format == "csv") WriteSweepCsv(stdout, report);
  else if (options.format == "json") WriteSweepJson(stdout, report);
  else WriteSweepText(stdout, report);
  std::fflush(stdout);

  int status = kExitOk;
  if (!options.svg_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(options.svg_dir, ec);
    for (const NamedSvg& plot : SweepPlots(report.rows, sweep::BaselineOf(lists))) {
      if (auto st = WriteText(options.svg_dir + "/" + plot.file, plot.svg); !st)
        status = ReportBadInput("sweep: " + st.error().message);
    }
  }
  // One line per workload and distinct error (a missing binary fails every row the same way).
  size_t failed = 0;
  std::string last;
  for (const auto& row : report.rows)
    if (!row.ok) {
      if (row.workload + "\n" + row.error != last)
        std::fprintf(stderr, "ptprof: sweep: %s %s: %s\n", row.workload.c_str(),
                     row.config.Label().c_str(), row.error.c_str());
      last = row.workload + "\n" + row.error;
      ++failed;
    }
  if (failed != 0) {
    std::fprintf(stderr, "ptprof: sweep: %zu of %zu rows failed\n", failed, report.rows.size());
    status = kExitBadInput;
  }
  return status;
}

}  // namespace

Command AddSweepCommand(CLI::App& parent) {
  auto options = std::make_shared<SweepOptions>();
  CLI::App* app = parent.add_subcommand(
      "sweep", "trace size, packet mix, time resolution (TRF) and overhead over PT configurations");
  app->add_option("--workload", options->workloads,
                  "a workload by name (repeatable; default: all, see --list) or a program path");
  app->add_flag("--list", options->list, "list the known workloads and exit");
  app->add_option("--psb-period", options->psb,
                  "PSB periods in bytes: N, 2^K, A..B (powers of two when written 2^K), commas")
      ->capture_default_str();
  app->add_option("--mtc-period", options->mtc, "MTC exponents (0-15) or off, e.g. off,0..9")
      ->capture_default_str();
  app->add_option("--cyc-threshold", options->cyc, "CYC thresholds (0-15) or off, e.g. off,1..12")
      ->capture_default_str();
  app->add_option("--tsc", options->tsc, "TSC packets: on, off or on,off")->capture_default_str();
  app->add_option("--grid", options->grid,
                  "product: every combination; axes: one parameter at a time, the others at "
                  "their baseline")
      ->capture_default_str()->check(CLI::IsMember({"product", "axes"}));
  app->add_option("--backend", options->backend,
                  "qemu (emulated: exact sizes, no overhead) or any `ptprof record` backend "
                  "(timed: swbt, intel_pt, cs_etm)")
      ->capture_default_str();
  app->add_option("--repeat", options->repeat, "timed runs per configuration (timed backends)")
      ->capture_default_str()->check(CLI::Range(1, 1000));
  app->add_option("--cycles-per-insn", options->cycles_per_insn,
                  "qemu: the cycle model (core cycles per instruction)")
      ->capture_default_str()->check(CLI::Range(1, 1000));
  app->add_option("--format", options->format, "text, csv or json")
      ->capture_default_str()->check(CLI::IsMember({"text", "csv", "json"}));
  app->add_option("--svg-dir", options->svg_dir, "write the plots (SVG) into this directory");
  app->add_option("-o,--output", options->output_dir,
                  "keep the traces in this directory (qemu: raw PT per thread and the code)");
  app->add_option("--workload-dir", options->workload_dir,
                  "where the built workloads are (default: next to ptprof)");
  return Command{app, [options] { return RunSweepCommand(*options); }};
}

}  // namespace ptprof::cli
