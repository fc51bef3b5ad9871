#include "tools/bench/measure_rows.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "tests/unit/child_process.h"
#include "tools/bench/process_times.h"

namespace ptprof::bench {

namespace {

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// One cold run of `row` in a child process forked for it.
struct ColdSample {
  double seconds = 0;
  double sys = 0;  // system seconds
  uint64_t insns = 0;
};
bool ColdInChild(const Row& row, ColdSample& sample) {
  const testing::ChildRun child = testing::RunInChild([&](int out) {
    row.fresh();
    ColdSample measured;
    const double sys_start = ProcessSystemSeconds();
    const auto start = std::chrono::steady_clock::now();
    measured.insns = row.run();
    measured.seconds = SecondsSince(start);
    measured.sys = ProcessSystemSeconds() - sys_start;
    if (write(out, &measured, sizeof measured) != sizeof measured) _exit(1);
  });
  if (!child.Exited(0) || child.output.size() != sizeof sample) return false;
  std::memcpy(&sample, child.output.data(), sizeof sample);
  return true;
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// `runs` cold runs of `row` in child processes: their median (and range) in `m`, and the
// instructions each decoded; none when no child could run.
std::vector<uint64_t> ColdRunsInChildren(const Row& row, int runs, Measurement& m) {
  std::vector<double> seconds, sys;
  std::vector<uint64_t> insns;
  for (int k = 0; k < runs; ++k) {
    ColdSample sample;
    if (!ColdInChild(row, sample)) continue;
    seconds.push_back(sample.seconds);
    sys.push_back(sample.sys);
    insns.push_back(sample.insns);
  }
  if (insns.empty()) return insns;
  m.cold = Median(seconds);
  m.cold_sys = Median(sys);
  m.cold_min = *std::min_element(seconds.begin(), seconds.end());
  m.cold_max = *std::max_element(seconds.begin(), seconds.end());
  return insns;
}

}  // namespace

std::vector<Measurement> MeasureRows(const std::vector<Row>& rows, int repeat, bool interleave,
                                     int cold_runs) {
  std::vector<Measurement> results(rows.size());
  for (size_t r = 0; r < rows.size(); ++r) {
    results[r].name = rows[r].name;
    if (!rows[r].measured) results[r].cold = results[r].warm = 1e30;
  }
  // Run `round` (0: cold) of row `r`.
  auto measure = [&](int round, size_t r) {
    Measurement& m = results[r];
    // (When no child could run, the row's own first run is its cold one, as without them.)
    const std::vector<uint64_t> child_insns =
        round == 0 && cold_runs > 1 ? ColdRunsInChildren(rows[r], cold_runs, m)
                                    : std::vector<uint64_t>();
    const double cpu_start = ProcessCpuSeconds();
    const double sys_start = ProcessSystemSeconds();
    const auto start = std::chrono::steady_clock::now();
    m.insns = rows[r].run();
    const double s = SecondsSince(start);
    const double cpu = ProcessCpuSeconds() - cpu_start;
    if (round == 0 && child_insns.empty()) {
      m.cold = s;
      m.cold_sys = ProcessSystemSeconds() - sys_start;
    } else if (round > 0 && s < m.warm) {
      m.warm = s;
      m.warm_cpu = cpu;
    }
    if (rows[r].blocks) m.blocks = *rows[r].blocks;
    if (rows[r].note) m.note = *rows[r].note;
    for (uint64_t n : child_insns)
      if (n != m.insns)
        m.note += " (a cold run in a child process decoded " + std::to_string(n) + " instructions)";
  };
  if (interleave) {
    for (const Row& row : rows)
      if (row.measured) row.fresh();
    for (int round = 0; round <= repeat; ++round)
      for (size_t r = 0; r < rows.size(); ++r)
        if (rows[r].measured) measure(round, r);
  } else {
    for (size_t r = 0; r < rows.size(); ++r) {
      if (!rows[r].measured) continue;
      rows[r].fresh();
      for (int round = 0; round <= repeat; ++round) measure(round, r);
      rows[r].fresh();  // one row's caches at a time
    }
  }
  return results;
}

}  // namespace ptprof::bench
