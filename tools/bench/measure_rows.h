#pragma once
// MeasureRows answers, for parallel_bench, "how long does each row's decode take, cold and warm?":
// each row is a way to decode the same stream (libipt's block decoder, ptprof's engines on N
// threads), run once with empty caches and then again with what that run left in them.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ptprof::bench {

// A row of the table: how to empty its caches and how to decode once (the instructions
// decoded; for ptprof's rows also its model blocks and a note). Each row keeps its own caches.
struct Row {
  std::string name;
  bool measured = true;  // false: left out (--no-reference)
  std::function<void()> fresh;
  std::function<uint64_t()> run;
  const uint64_t* blocks = nullptr;  // after a run: its model blocks (ptprof's rows)
  const std::string* note = nullptr;  // after a run: what it says about the decode
};

struct Measurement {
  std::string name;
  double cold = 0;  // seconds of the first run
  // System CPU seconds of every thread in the first run: mostly the kernel clearing the fresh
  // memory a cold decode fills, which on a VM moves with how fast the host backs it.
  double cold_sys = 0;
  // With cold runs in child processes: the fastest and slowest of them (cold is their median).
  double cold_min = 0, cold_max = 0;
  double warm = 1e30;  // the best of the others
  double warm_cpu = 0;  // CPU seconds of every thread in the best warm run
  uint64_t insns = 0;
  uint64_t blocks = 0;  // model blocks, for ptprof's rows (its one-piece decode on libipt is the reference)
  std::string note;
  uint64_t digest = 0;  // --verify: the digest of its events (0: not verified)
};

// Runs every row 1 + repeat times: first once after `fresh` emptied its caches (cold), then
// `repeat` times with what its first run left in them (warm, the best kept). Back to back, each
// row's runs follow one another; interleaved, the rows take turns (a round of every row, then
// the next round), so that they see the same spells of a machine whose speed moves within
// minutes and their ratios do not follow which row ran in a slow one.
// With `cold_runs` above one, the cold time is the median of that many cold runs, each in a
// child process forked for it (its memory fresh, as a command's one decode finds it), and the
// row's own first run is not timed.
std::vector<Measurement> MeasureRows(const std::vector<Row>& rows, int repeat, bool interleave,
                                     int cold_runs);

}  // namespace ptprof::bench
