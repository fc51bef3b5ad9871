// Backends with real overhead (swbt, intel_pt, cs_etm, ...): RunSweep runs `ptprof record
// --backend B` per grid point and repetition and times it against untraced runs of the program.
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "decoders/pt/trace_census.h"
#include "sideband/file_bytes.h"
#include "src/analyses/sweep/sweep_metrics.h"
#include "src/analyses/sweep/sweep_runner.h"

extern char** environ;

namespace ptprof::sweep {

namespace {

struct RunResult {
  bool started = false;
  int status = -1;  // exit status, or 128 + signal
  double seconds = 0;
  std::string last_error_line;  // the last non-empty line the program wrote on stderr
};

std::string LastLine(const std::string& path) {
  std::ifstream in(path);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  return last;
}

// Runs argv with stdout to /dev/null and stderr to `stderr_path`, timing it (wall clock).
RunResult Run(const std::vector<std::string>& argv, const std::string& stderr_path) {
  RunResult result;
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, stderr_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  const auto begin = std::chrono::steady_clock::now();
  pid_t pid = 0;
  int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    result.last_error_line = argv[0] + ": cannot start";
    return result;
  }
  result.started = true;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.last_error_line = LastLine(stderr_path);
  return result;
}

// Trace bytes: the size of the archive `ptprof record` wrote (its packets are not counted here).
void MeasureArchive(const std::string& path, SweepRow& row) {
  struct stat st{};
  if (stat(path.c_str(), &st) == 0) row.trace_bytes = static_cast<uint64_t>(st.st_size);
  row.trace_files.push_back(path);
}

}  // namespace

std::vector<SweepRow> RunRecordWorkload(const Workload& workload, const SweepRequest& request,
                                        const std::string& work_dir) {
  const std::string err = work_dir + "/" + workload.name + ".stderr";
  const unsigned repeat = request.repeat == 0 ? 1 : request.repeat;
  std::vector<double> untraced;
  for (unsigned k = 0; k < repeat; ++k) {
    RunResult run = Run({workload.binary}, err);
    if (!run.started || run.status != 0) {
      std::remove(err.c_str());
      return FailedRows(workload, request,
                        run.started ? workload.binary + " exited with status " +
                                          std::to_string(run.status)
                                    : run.last_error_line);
    }
    untraced.push_back(run.seconds);
  }
  std::vector<SweepRow> rows;
  for (const GridPoint& point : request.grid) {
    if (request.progress) request.progress("sweep: " + workload.name + " " + point.config.Label());
    SweepRow row;
    row.workload = workload.name;
    row.backend = request.backend;
    row.axis = point.axis;
    row.config = point.config;
    const std::string out = work_dir + "/" + workload.name + "." + point.config.Label() + "." +
                            request.backend + ".ptar";
    std::vector<std::string> argv = {request.ptprof, "record", "--backend", request.backend};
    // The software branch tracer has no packet configuration: its rows are one point.
    if (request.backend != "swbt")
      for (const std::string& a : point.config.RecordArgs()) argv.push_back(a);
    // Without the binaries the archive is the trace (and writing it costs the least).
    argv.insert(argv.end(), {"--no-binaries", "--force", "-q", "-o", out, "--", workload.binary});
    std::vector<double> traced;
    for (unsigned k = 0; k < repeat && row.error.empty(); ++k) {
      RunResult run = Run(argv, err);
      if (!run.started || run.status != 0)
        row.error = "ptprof record --backend " + request.backend + " exited with status " +
                    std::to_string(run.status) +
                    (run.last_error_line.empty() ? "" : ": " + run.last_error_line);
      else
        traced.push_back(run.seconds);
    }
    if (row.error.empty()) {
      row.overhead = SummariseOverhead(untraced, traced);
      row.traced_seconds = LowerMedian(traced);
      MeasureArchive(out, row);
      row.ok = true;
      if (request.trace_dir.empty()) std::remove(out.c_str());
    }
    rows.push_back(row);
  }
  std::remove(err.c_str());
  return rows;
}

}  // namespace ptprof::sweep
