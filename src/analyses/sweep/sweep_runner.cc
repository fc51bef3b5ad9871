#include "src/analyses/sweep/sweep_runner.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

namespace ptprof::sweep {

std::vector<SweepRow> FailedRows(const Workload& workload, const SweepRequest& request,
                                 const std::string& error) {
  std::vector<SweepRow> rows;
  for (const GridPoint& point : request.grid) {
    SweepRow row;
    row.workload = workload.name;
    row.backend = request.backend;
    row.axis = point.axis;
    row.config = point.config;
    row.ok = false;
    row.error = error;
    rows.push_back(row);
  }
  return rows;
}

std::vector<SweepRow> RunSweep(const SweepRequest& request) {
  std::vector<SweepRow> rows;
  // Traces go to the user's directory or to a private one removed at the end.
  std::string work_dir = request.trace_dir;
  bool temporary = false;
  if (work_dir.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/ptprof-sweep-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) {
      for (const Workload& w : request.workloads) {
        auto failed = FailedRows(w, request, "cannot create a temporary directory in " + pattern);
        rows.insert(rows.end(), failed.begin(), failed.end());
      }
      return rows;
    }
    work_dir = pattern;
    temporary = true;
  } else {
    std::error_code ec;
    std::filesystem::create_directories(work_dir, ec);
  }
  for (const Workload& workload : request.workloads) {
    if (request.progress) request.progress("sweep: " + workload.name + " (" + workload.binary + ")");
    std::vector<SweepRow> got;
    if (access(workload.binary.c_str(), X_OK) != 0)
      got = FailedRows(workload, request, workload.binary + ": missing or not executable");
    else if (request.backend == "qemu")
      got = RunQemuWorkload(workload, request, work_dir);
    else
      got = RunRecordWorkload(workload, request, work_dir);
    rows.insert(rows.end(), got.begin(), got.end());
  }
  if (temporary) {
    std::error_code ec;
    std::filesystem::remove_all(work_dir, ec);
  }
  return rows;
}

}  // namespace ptprof::sweep
