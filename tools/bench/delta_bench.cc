// delta_bench: delta-profiling and syscall-analysis throughput beside plain decoding of the same
// trace in the same run. Decodes every stream of INPUT (merged by time, as ptprof decode and delta
// do) into a counting sink, then into a DeltaProfiler for a rare pair (superCLI,superSTI: no match
// in user code, the cost of the per-block lookups alone) and a frequent one (call -> ret), then
// through the call-stack builder alone (the trees of `ptprof stacks`, no observer), then through
// the syscall analysis (call stacks and syscall instances, as `ptprof syscalls`), then into the
// flow side of `ptprof validate` (its taken branches normalised to edges, runs and ranges, and
// about 2,000 bursts of 32 branches taken from the flow beforehand looked for in it), and
// prints M insn/s for each and its ratio to plain decoding (1.00 = no slower), each the best of
// --repeat rounds that run every row once in turn, with the CPU time of all threads in that best
// run. --jobs N decodes every run on N threads (as the commands' --jobs), the default one; given
// more than once, every round runs the rows at each thread count in turn, and a last table sets
// each count's time and CPU time over the first's, row by row (the gain of N threads, and how
// much more work the same decode and analysis took on them). With 1 among the counts, each round
// also runs each row's one-thread run N times at once for each count N above one, on N threads
// that share nothing but the session (each its own decode, code graph and analysis): what this
// machine gives N such runs that never wait for one another, and a last table sets N times the
// one-thread time over that (the row's ceiling on N threads here) beside ptprof's own N threads
// over one. --psb-segment BYTES sets the segments' size (the commands' --psb-segment). --only
// delta|stacks|syscalls|validate measures the plain decode and that one only.
// Each round of a row decodes with a code graph made for it (cold, as a command's one decode of a
// short trace), unless --warm: then each row keeps its code graphs from round to round, after a
// first round that builds them and is not timed (as a long trace's decode runs after its first
// stretch); what an analysis keeps of its own is made anew in every round either way.
//
//   delta_bench [--repeat N] [--jobs N]... [--psb-segment BYTES] [--only WHAT] [--warm] INPUT
#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <cstdio>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "decoders/pt/fast/code_blocks.h"
#include "src/analyses/crossval/address_normaliser.h"
#include "src/analyses/crossval/cross_validate.h"
#include "src/analyses/crossval/flow_edges.h"
#include "src/analyses/delta/delta_profiler.h"
#include "src/analyses/patterns/pattern_library.h"
#include "src/analyses/support/call_stack.h"
#include "src/analyses/syscalls/syscall_run.h"
#include "src/model/decode_defaults.h"
#include "src/model/parted_sink.h"
#include "src/model/taken_branches.h"
#include "src/pipeline/decode_streams.h"
#include "src/pipeline/session.h"
#include "tools/bench/process_times.h"

namespace {

using namespace ptprof;

// Counts instructions; in parts when the decode is parallel, as the analyses measured beside it
// take their streams (src/model/parted_sink.h).
class CountingSink : public PartedSink {
 public:
  void OnEvent(const TraceEvent& event) override {
    if (const auto* b = std::get_if<ExecBlock>(&event.body)) insns += b->insns;
  }
  void OnBlocks(const BlockBatch& batch) override {
    for (const PackedEvent& b : batch.blocks) insns += b.insns;
  }
  std::unique_ptr<EventSink> NewPart() const override { return std::make_unique<CountingSink>(); }
  void Fold(std::unique_ptr<EventSink> part) override {
    insns += static_cast<const CountingSink&>(*part).insns;
  }
  uint64_t insns = 0;
};

// Bursts of `kDepth` consecutive taken branches of one thread, as a branch-record sampler would
// take them (one at every kPeriod-th branch of the flow, when its thread's unbroken run holds
// that many): what `validate`'s side B looks like to the flow side, taken from the flow itself.
class BurstSampler : public EventSink {
 public:
  static constexpr size_t kDepth = 32;
  static constexpr uint64_t kPeriod = 10007;
  void OnEvent(const TraceEvent& event) override {
    Thread& t = threads_[FlowThread(event.header.cpu, event.header.tid)];
    if (const auto* b = std::get_if<ExecBlock>(&event.body)) {
      Block(t, event.header.pid, b->first_ip, b->last_ip, b->end);
    } else if (BreaksBranchRun(event)) {
      t.pending.taken = false;
      t.taken = 0;
    }
  }
  void OnBlocks(const BlockBatch& batch) override {
    Thread& t = threads_[FlowThread(batch.cpu, batch.tid)];
    for (const PackedEvent& b : batch.blocks)
      Block(t, batch.pid, b.first_ip_or_index, b.first_ip_or_index + b.span, static_cast<BlockEnd>(b.end));
  }
  std::vector<BranchSample> bursts;

 private:
  struct Thread {
    PendingBranch pending;
    int32_t pid = -1;
    // Its last kDepth branches at most: a ring, the next one written at slot `taken % kDepth`.
    BranchRecord ring[kDepth];
    size_t taken = 0;  // since the run began
  };
  void Block(Thread& t, int32_t pid, uint64_t first_ip, uint64_t last_ip, BlockEnd end) {
    const BlockEndRole role = t.pending.Follow(first_ip, last_ip, end, [&](uint64_t from, uint64_t to) {
      t.ring[t.taken++ % kDepth] = BranchRecord{from, to};
      if (++branches_ % kPeriod != 0 || t.taken < kDepth) return;
      BranchSample& sample = bursts.emplace_back();
      sample.sample = bursts.size() - 1;
      sample.pid = static_cast<uint32_t>(t.pid);
      for (size_t k = 0; k < kDepth; ++k) sample.branches.push_back(t.ring[(t.taken + k) % kDepth]);  // oldest first
    });
    if (role == BlockEndRole::kTaken) t.pid = pid;
    if (role == BlockEndRole::kBreaks) t.taken = 0;
  }
  std::unordered_map<int64_t, Thread> threads_;
  uint64_t branches_ = 0;
};

// One row's code graphs, by stream, lent to its decodes with --warm (else none: each decode makes
// its own).
class GraphLender {
 public:
  explicit GraphLender(bool warm) : warm_(warm) {}
  DecodeStreamsOptions Options() {
    DecodeStreamsOptions options;
    if (warm_)
      options.graphs = [this](size_t stream) {
        std::lock_guard<std::mutex> lock(mutex_);  // (several runs at once: the ceiling's)
        auto& pool = pools_[stream];
        if (!pool) pool = std::make_unique<pt::fast::CodeGraphPool>();
        return pool.get();
      };
    return options;
  }

 private:
  bool warm_;
  std::mutex mutex_;
  std::map<size_t, std::unique_ptr<pt::fast::CodeGraphPool>> pools_;
};

// What a row's run says of itself: its label in the tables (with counts of what it found) and
// details after its speed.
struct RowText {
  std::string label;
  std::string details;
};

// One row of the tables: `run` once per round and thread count.
struct Row {
  std::string name;  // in the last table
  std::function<RowText()> run;
  // Per thread count (the order of --jobs): the best time and the CPU time of all the process's
  // threads in that run, in seconds.
  std::vector<double> best = {};
  std::vector<double> cpu = {};
  std::vector<RowText> text = {};  // of its last run
  // Per thread count above one, with one thread among the counts: the best time of that many
  // one-thread runs at once (0: not measured).
  std::vector<double> at_once = {};
};

// Runs `row` on `n` threads at once, one run each on one thread; the time until all are done.
double RunAtOnce(Row& row, unsigned n) {
  SetDefaultDecodeJobs(1);
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (unsigned k = 0; k < n; ++k) threads.emplace_back([&row] { (void)row.run(); });
  for (std::thread& thread : threads) thread.join();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Runs every row `repeat` times at each thread count of `jobs`, round by round (each round runs
// each row once at each count, in order), and keeps each row's best time per count: a slow spell
// of the machine (this VM drifts by 10 % and more from one second to the next) falls on all the
// rows of a round alike, not on one row's repeats, so the ratios hold better than the times.
// With `warm_up`, a first round runs untimed.
void RunRounds(int repeat, bool warm_up, const std::vector<unsigned>& jobs,
               std::vector<Row>& rows) {
  const bool ceiling = std::find(jobs.begin(), jobs.end(), 1u) != jobs.end();
  for (Row& row : rows) {
    row.best.assign(jobs.size(), 1e30);
    row.cpu.assign(jobs.size(), 0);
    row.text.assign(jobs.size(), RowText{});
    row.at_once.assign(jobs.size(), 0);
  }
  if (warm_up)
    for (unsigned j : jobs) {
      SetDefaultDecodeJobs(j);
      for (Row& row : rows) (void)row.run();
      if (ceiling && j > 1)
        for (Row& row : rows) (void)RunAtOnce(row, j);
    }
  for (int round = 0; round < repeat; ++round)
    for (size_t j = 0; j < jobs.size(); ++j) {
      if (ceiling && jobs[j] > 1)
        for (Row& row : rows) {
          const double seconds = RunAtOnce(row, jobs[j]);
          if (row.at_once[j] == 0 || seconds < row.at_once[j]) row.at_once[j] = seconds;
        }
      SetDefaultDecodeJobs(jobs[j]);
      for (Row& row : rows) {
        const double cpu_start = bench::ProcessCpuSeconds();
        const auto start = std::chrono::steady_clock::now();
        row.text[j] = row.run();
        const auto elapsed = std::chrono::steady_clock::now() - start;
        const double seconds = std::chrono::duration<double>(elapsed).count();
        if (seconds < row.best[j]) {
          row.best[j] = seconds;
          row.cpu[j] = bench::ProcessCpuSeconds() - cpu_start;
        }
      }
    }
}

// The last table: for each count N above one, N one-thread runs at once, and N times the one
// thread's time over theirs beside ptprof's N threads over one.
void PrintCeilings(const std::vector<unsigned>& jobs, const std::vector<Row>& rows) {
  const auto one = std::find(jobs.begin(), jobs.end(), 1u);
  if (one == jobs.end() || jobs.size() < 2) return;
  const size_t o = static_cast<size_t>(one - jobs.begin());
  std::printf("this machine's ceiling: each row's one-thread run N times at once on N threads "
              "(best time), N times one run's time over that, and ptprof's N threads over one:\n");
  for (const Row& row : rows) {
    std::printf("  %-26s", row.name.c_str());
    for (size_t j = 0; j < jobs.size(); ++j) {
      if (jobs[j] < 2) continue;
      std::printf(" | %u at once: %7.1f ms, ceiling %.2fx, %u threads %.2fx", jobs[j],
                  row.at_once[j] * 1e3, jobs[j] * row.best[o] / row.at_once[j], jobs[j],
                  row.best[o] / row.best[j]);
    }
    std::printf("\n");
  }
}

}  // namespace

int main(int argc, char** argv) {
  int repeat = 3;
  std::string only;
  std::string input;
  bool warm = false;
  std::vector<unsigned> jobs;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--repeat" && i + 1 < argc) repeat = std::atoi(argv[++i]);
    else if (arg == "--warm") warm = true;
    else if (arg == "--only" && i + 1 < argc) only = argv[++i];
    else if (arg == "--jobs" && i + 1 < argc)
      jobs.push_back(static_cast<unsigned>(std::max(1, std::atoi(argv[++i]))));
    else if (arg == "--psb-segment" && i + 1 < argc)
      SetDefaultSegmentBytes(std::max(1ll, std::atoll(argv[++i])));
    else input = arg;
  }
  if (input.empty() || !(only.empty() || only == "delta" || only == "stacks" ||
                         only == "syscalls" || only == "validate")) {
    std::fprintf(stderr, "usage: delta_bench [--repeat N] [--jobs N]... [--psb-segment BYTES] "
                         "[--only delta|stacks|syscalls|validate] [--warm] INPUT\n");
    return 2;
  }
  if (jobs.empty()) jobs.push_back(1);
  auto session = OpenSession(input, RawInputOptions{}, false);
  if (!session) {
    std::fprintf(stderr, "delta_bench: %s\n", session.error().message.c_str());
    return 1;
  }
  auto selected = SelectStreams(*session, {});
  if (!selected) return 1;

  std::vector<Row> rows;
  std::deque<GraphLender> lenders;  // per row
  auto lender = [&]() -> GraphLender& { return lenders.emplace_back(warm); };
  std::atomic<uint64_t> insns = 0;  // (written by the ceiling's runs at once too)
  rows.push_back({"decode", [&, &graphs = lender()] {
                    CountingSink sink;
                    DecodeStreams(*session, *selected, graphs.Options(), sink);
                    insns = sink.insns;
                    return RowText{"decode (counting sink)", ""};
                  }});

  patterns::PatternLibrary library;
  (void)library.Define("call=call");
  (void)library.Define("ret=ret");
  auto measures = [&only](const char* what) { return only.empty() || only == what; };
  const std::pair<const char*, const char*> pairs[2] = {{"superCLI", "superSTI"}, {"call", "ret"}};
  for (int p = 0; p < 2 && measures("delta"); ++p) {
    const auto [open, close] = pairs[p];
    const std::string name = std::string("delta ") + open + "," + close;
    rows.push_back({name, [&, name, open, close, &graphs = lender()] {
                      delta::DeltaOptions options;
                      // As `ptprof delta` keeps them for a text or JSON report.
                      options.keeping = {false, 10};
                      // Timed as `ptprof delta` times them (ClockFor in src/cli/delta_run.cc):
                      // every interval's two ends read the clock, and its time is tallied and
                      // ranked.
                      options.clock = EventClock::OfNominalFrequency(session->params().nom_freq);
                      auto profiler = delta::DeltaProfiler::Create(
                          session->images, *library.Find(open), *library.Find(close), options);
                      DecodeStreamsOptions decode = graphs.Options();
                      decode.mark_runs = true;  // as `ptprof delta` decodes
                      DecodeStreams(*session, *selected, decode, **profiler);
                      (*profiler)->OnEnd();
                      return RowText{
                          name + " (" + std::to_string((*profiler)->counts().intervals) +
                              " intervals)",
                          "(" + std::to_string((*profiler)->decoded_instructions()) +
                              " instructions classified, " +
                              std::to_string((*profiler)->disassembled_instructions()) +
                              " disassembled)"};
                    }});
  }
  if (measures("stacks")) {
    rows.push_back({"call stacks", [&, &graphs = lender()] {
                      CallStackBuilder builder({&session->images.symbols(), {}});
                      uint64_t parts = 0, redone = 0;
                      for (const StreamOutcome& outcome :
                           DecodeStreams(*session, *selected, graphs.Options(), builder))
                        if (outcome.summary) {
                          parts += outcome.summary->parts;
                          redone += outcome.summary->parts_redone;
                        }
                      builder.OnEnd();
                      uint64_t entries = 0;
                      builder.TakeMerged().ForEach(
                          [&](const CallTreeNode& node, int) { entries += node.entries; });
                      return RowText{"call stacks (" + std::to_string(entries) + " frames)",
                                     "(" + std::to_string(builder.blocks()) + " blocks; " +
                                         std::to_string(parts) + " parts, " +
                                         std::to_string(redone) + " decoded again)"};
                    }});
  }
  if (measures("syscalls")) {
    rows.push_back({"syscalls", [&, &graphs = lender()] {
                      auto run =
                          syscalls::RunSyscalls(*session, *selected, input, graphs.Options());
                      const size_t count = run ? run->instances.size() : 0;
                      return RowText{"syscalls (" + std::to_string(count) + " instances)", ""};
                    }});
  }
  AddressNormaliser normaliser;
  normaliser.AddSessionImages(*session);
  BurstSampler sampler;
  if (measures("validate")) {
    // B's bursts, from a decode before the rounds (one thread, in one piece).
    SetDefaultDecodeJobs(1);
    DecodeStreams(*session, *selected, DecodeStreamsOptions{}, sampler);
    rows.push_back({"validate's flow", [&, &graphs = lender()] {
                      // As the command: B's bursts expected, then the decode into the flow.
                      CrossValidator validator({}, normaliser,
                                               [](uint64_t) { return std::string(); });
                      validator.Expect(sampler.bursts, normaliser);
                      FlowEdges& flow = validator.flow();
                      uint64_t parts = 0;
                      for (const StreamOutcome& outcome :
                           DecodeStreams(*session, *selected, graphs.Options(), flow))
                        if (outcome.summary) parts += outcome.summary->parts;
                      flow.OnEnd();
                      return RowText{"validate's flow (" + std::to_string(flow.branches()) +
                                         " branches)",
                                     "(" + std::to_string(flow.edges()) + " edges; " +
                                         std::to_string(validator.BurstsFound()) + " of " +
                                         std::to_string(sampler.bursts.size()) +
                                         " bursts found; " + std::to_string(parts) + " parts)"};
                    }});
  }
  RunRounds(repeat, warm, jobs, rows);
  const char* graphs = warm ? "code graphs warm (kept from an untimed first round)"
                            : "code graphs cold (made in every round)";
  for (size_t j = 0; j < jobs.size(); ++j) {
    const uint64_t count = insns.load();
    std::printf("input %s: %llu instructions, best of %d rounds, %u thread%s, %s\n", input.c_str(),
                static_cast<unsigned long long>(count), repeat, jobs[j], jobs[j] == 1 ? "" : "s",
                graphs);
    for (const Row& row : rows) {
      const RowText& text = row.text[j];
      std::printf("  %-34s %8.1f M insn/s  ratio %.2f%s%s\n", text.label.c_str(),
                  static_cast<double>(count) / row.best[j] / 1e6,
                  rows.front().best[j] / row.best[j],
                  text.details.empty() ? "" : "  ", text.details.c_str());
    }
  }
  if (jobs.size() > 1) {
    std::printf("each row's best time and the CPU time of all threads in that run (ms), by thread "
                "count, and over %u thread%s:\n", jobs[0], jobs[0] == 1 ? "" : "s");
    for (const Row& row : rows) {
      std::printf("  %-26s %u: %7.1f ms, cpu %7.1f", row.name.c_str(), jobs[0],
                  row.best[0] * 1e3, row.cpu[0] * 1e3);
      for (size_t j = 1; j < jobs.size(); ++j)
        std::printf(" | %u: %7.1f ms, cpu %7.1f, %.2fx faster, %.2fx the cpu", jobs[j],
                    row.best[j] * 1e3, row.cpu[j] * 1e3, row.best[0] / row.best[j],
                    row.cpu[j] / row.cpu[0]);
      std::printf("\n");
    }
  }
  PrintCeilings(jobs, rows);
  return 0;
}
