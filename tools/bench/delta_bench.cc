// delta_bench: delta-profiling and syscall-analysis throughput beside plain decoding of the same
// trace in the same run. Decodes every stream of INPUT (merged by time, as ptprof decode and delta
// do) into a counting sink, then into a DeltaProfiler for a rare pair (superCLI,superSTI: no match
// in user code, the cost of the per-block lookups alone) and a frequent one (call -> ret), then
// through the call-stack builder alone (the trees of `ptprof stacks`, no observer), then through
// the syscall analysis (call stacks and syscall instances, as `ptprof syscalls`), then into the
// flow side of `ptprof validate` (its taken branches normalised to edges, runs and ranges, and
// about 2,000 bursts of 32 branches taken from the flow beforehand looked for in it), and
// prints M insn/s for each and its ratio to plain decoding (1.00 = no slower), each the best of
// --repeat rounds that run every row once in turn. --jobs N decodes every run on N threads (as the
// commands' --jobs), the default one. --only delta|stacks|syscalls|validate measures the plain
// decode and that one only.
// Each round of a row decodes with a code graph made for it (cold, as a command's one decode of a
// short trace), unless --warm: then each row keeps its code graphs from round to round, after a
// first round that builds them and is not timed (as a long trace's decode runs after its first
// stretch); what an analysis keeps of its own is made anew in every round either way.
//
//   delta_bench [--repeat N] [--jobs N] [--only WHAT] [--warm] INPUT
#include <algorithm>
#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <cstdio>
#include <functional>
#include <string>
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
        auto& pool = pools_[stream];
        if (!pool) pool = std::make_unique<pt::fast::CodeGraphPool>();
        return pool.get();
      };
    return options;
  }

 private:
  bool warm_;
  std::map<size_t, std::unique_ptr<pt::fast::CodeGraphPool>> pools_;
};

// One row of the table: `run` once per round, then `print(best, plain)` with its best time and
// the plain decode's, in seconds.
struct Row {
  std::function<void()> run;
  std::function<void(double best, double plain)> print;
  double best = 1e30;
};

// Runs every row `repeat` times, round by round (each round runs each row once, in order), and
// keeps each row's best time: a slow spell of the machine (this VM drifts by 10 % and more from
// one second to the next) falls on all the rows of a round alike, not on one row's repeats, so
// the ratios hold better than the times.
// With `warm_up`, a first round runs untimed.
void RunRounds(int repeat, bool warm_up, std::vector<Row>& rows) {
  if (warm_up)
    for (Row& row : rows) row.run();
  for (int round = 0; round < repeat; ++round)
    for (Row& row : rows) {
      const auto start = std::chrono::steady_clock::now();
      row.run();
      const auto elapsed = std::chrono::steady_clock::now() - start;
      row.best = std::min(row.best, std::chrono::duration<double>(elapsed).count());
    }
}

}  // namespace

int main(int argc, char** argv) {
  int repeat = 3;
  std::string only;
  std::string input;
  bool warm = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--repeat" && i + 1 < argc) repeat = std::atoi(argv[++i]);
    else if (arg == "--warm") warm = true;
    else if (arg == "--only" && i + 1 < argc) only = argv[++i];
    else if (arg == "--jobs" && i + 1 < argc) SetDefaultDecodeJobs(std::max(1, std::atoi(argv[++i])));
    else input = arg;
  }
  if (input.empty() || !(only.empty() || only == "delta" || only == "stacks" ||
                         only == "syscalls" || only == "validate")) {
    std::fprintf(stderr, "usage: delta_bench [--repeat N] [--jobs N] "
                         "[--only delta|stacks|syscalls|validate] [--warm] INPUT\n");
    return 2;
  }
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
  uint64_t insns = 0;
  rows.push_back({[&, &graphs = lender()] {
                    CountingSink sink;
                    DecodeStreams(*session, *selected, graphs.Options(), sink);
                    insns = sink.insns;
                  },
                  [&](double best, double) {
                    std::printf("input %s: %llu instructions, best of %d rounds, %u thread%s, %s\n",
                                input.c_str(), static_cast<unsigned long long>(insns), repeat,
                                DefaultDecodeJobs(), DefaultDecodeJobs() == 1 ? "" : "s",
                                warm ? "code graphs warm (kept from an untimed first round)"
                                     : "code graphs cold (made in every round)");
                    std::printf("  %-34s %8.1f M insn/s  ratio 1.00\n", "decode (counting sink)",
                                insns / best / 1e6);
                  }});

  patterns::PatternLibrary library;
  (void)library.Define("call=call");
  (void)library.Define("ret=ret");
  auto measures = [&only](const char* what) { return only.empty() || only == what; };
  struct DeltaCount {
    uint64_t intervals = 0, classified = 0, disassembled = 0;
  };
  DeltaCount delta_counts[2];
  const std::pair<const char*, const char*> pairs[2] = {{"superCLI", "superSTI"}, {"call", "ret"}};
  for (int p = 0; p < 2 && measures("delta"); ++p) {
    const auto [open, close] = pairs[p];
    DeltaCount& counts = delta_counts[p];
    rows.push_back(
        {[&, open, close, &graphs = lender()] {
           delta::DeltaOptions options;
           options.keeping = {false, 10};  // as `ptprof delta` keeps them for a text or JSON report
           // Timed as `ptprof delta` times them (ClockFor in src/cli/delta_run.cc): every
           // interval's two ends read the clock, and its time is tallied and ranked.
           options.clock = EventClock::OfNominalFrequency(session->params().nom_freq);
           auto profiler = delta::DeltaProfiler::Create(session->images, *library.Find(open),
                                                        *library.Find(close), options);
           DecodeStreamsOptions decode = graphs.Options();
           decode.mark_runs = true;  // as `ptprof delta` decodes
           DecodeStreams(*session, *selected, decode, **profiler);
           (*profiler)->OnEnd();
           counts.intervals = (*profiler)->counts().intervals;
           counts.classified = (*profiler)->decoded_instructions();
           counts.disassembled = (*profiler)->disassembled_instructions();
         },
         [&, open, close](double best, double plain) {
           const std::string name = std::string("delta ") + open + "," + close + " (" +
                                    std::to_string(counts.intervals) + " intervals)";
           std::printf("  %-34s %8.1f M insn/s  ratio %.2f  (%llu instructions classified, "
                       "%llu disassembled)\n",
                       name.c_str(), insns / best / 1e6, plain / best,
                       static_cast<unsigned long long>(counts.classified),
                       static_cast<unsigned long long>(counts.disassembled));
         }});
  }
  uint64_t blocks = 0, entries = 0, stack_parts = 0, redone = 0;
  if (measures("stacks")) {
    rows.push_back(
        {[&, &graphs = lender()] {
           CallStackBuilder builder({&session->images.symbols(), {}});
           stack_parts = redone = 0;
           for (const StreamOutcome& outcome :
                DecodeStreams(*session, *selected, graphs.Options(), builder))
             if (outcome.summary) {
               stack_parts += outcome.summary->parts;
               redone += outcome.summary->parts_redone;
             }
           builder.OnEnd();
           blocks = builder.blocks();
           entries = 0;
           builder.TakeMerged().ForEach(
               [&](const CallTreeNode& node, int) { entries += node.entries; });
         },
         [&](double best, double plain) {
           const std::string name = "call stacks (" + std::to_string(entries) + " frames)";
           std::printf("  %-34s %8.1f M insn/s  ratio %.2f  (%llu blocks; %llu parts, %llu "
                       "decoded again)\n",
                       name.c_str(), insns / best / 1e6, plain / best,
                       static_cast<unsigned long long>(blocks),
                       static_cast<unsigned long long>(stack_parts),
                       static_cast<unsigned long long>(redone));
         }});
  }
  uint64_t syscall_count = 0;
  if (measures("syscalls")) {
    rows.push_back({[&, &graphs = lender()] {
                      auto run = syscalls::RunSyscalls(*session, *selected, input, graphs.Options());
                      syscall_count = run ? run->instances.size() : 0;
                    },
                    [&](double best, double plain) {
                      const std::string name =
                          "syscalls (" + std::to_string(syscall_count) + " instances)";
                      std::printf("  %-34s %8.1f M insn/s  ratio %.2f\n", name.c_str(),
                                  insns / best / 1e6, plain / best);
                    }});
  }
  AddressNormaliser normaliser;
  normaliser.AddSessionImages(*session);
  uint64_t branches = 0, edges = 0, flow_parts = 0;
  size_t bursts = 0, found = 0;
  BurstSampler sampler;
  if (measures("validate")) {
    // B's bursts, from a decode before the rounds (one thread, in one piece).
    const unsigned jobs = DefaultDecodeJobs();
    SetDefaultDecodeJobs(1);
    DecodeStreams(*session, *selected, DecodeStreamsOptions{}, sampler);
    SetDefaultDecodeJobs(jobs);
    bursts = sampler.bursts.size();
    rows.push_back({[&, &graphs = lender()] {
                      // As the command: B's bursts expected, then the decode into the flow.
                      CrossValidator validator({}, normaliser, [](uint64_t) { return std::string(); });
                      validator.Expect(sampler.bursts, normaliser);
                      FlowEdges& flow = validator.flow();
                      flow_parts = 0;
                      for (const StreamOutcome& outcome :
                           DecodeStreams(*session, *selected, graphs.Options(), flow))
                        if (outcome.summary) flow_parts += outcome.summary->parts;
                      flow.OnEnd();
                      branches = flow.branches();
                      edges = flow.edges();
                      found = validator.BurstsFound();
                    },
                    [&](double best, double plain) {
                      const std::string name =
                          "validate's flow (" + std::to_string(branches) + " branches)";
                      std::printf("  %-34s %8.1f M insn/s  ratio %.2f  (%llu edges; %zu of %zu bursts found; %llu parts)\n",
                                  name.c_str(), insns / best / 1e6, plain / best,
                                  static_cast<unsigned long long>(edges), found, bursts,
                                  static_cast<unsigned long long>(flow_parts));
                    }});
  }
  RunRounds(repeat, warm, rows);
  for (const Row& row : rows) row.print(row.best, rows.front().best);
  return 0;
}
