// parallel_bench: decode throughput of ptprof's block flow on one thread and on several (PSB
// segments decoded at once and stitched), beside libipt's block decoder driven directly, on the
// same stream of a .ptar, perf.data or raw trace in the same run. Prints, per mode, the first
// run with empty caches (cold: the images are loaded, libipt's block cache and ptprof's code
// graph and TNT runs are built) and the best of the repeats that find the caches the first left
// (warm): MB/s, M insn/s and the ratio to libipt's block decoder, cold to cold and warm to warm,
// and checks that every mode decoded the same number of instructions. Several threads are
// measured twice: with the counting consumer taking the stream in parts (each thread counts what
// it decodes, src/model/parted_sink.h) and as one ordered stream ("one stream": every event
// passes the thread that stitches the segments, as for a consumer that needs one stream).
//
//   parallel_bench [--repeat N] [--cold N] [--jobs N]... [--psb-segment BYTES]...
//                  [--engine fast|libipt] [--stream NAME] [--no-reference] [--verify]
//                  [--interleave] INPUT
//
// --no-reference leaves out the libipt rows (to profile ptprof's rows alone; no ratios then).
// --interleave runs the modes by turns (a round of each, then the next) instead of each mode's
// runs back to back: on a machine whose speed moves within minutes, ptprof's rows then see the
// same spells. (On the development VM libipt's warm runs are slower interleaved, 1.1 s against
// 0.78 s on sort, with no more page faults: its ratios are taken back to back.)
// For each thread count N above one, a last row decodes the whole stream N times at once, on N
// threads that share nothing (each its own code graph, fast engine, one thread each): what this
// machine's N cores give N decodes that never wait for one another. The line after the table
// sets it beside ptprof's own N threads: N times the one-thread row's warm time over that row's
// (the most N threads can gain here), and the same for ptprof on N threads. (Only warm: a cold
// run's memory is fresh from the kernel for the first rows and partly reused by later ones, so
// the last row's cold run is not a ceiling for the others'.)
// --cold N (N above one) measures each row's cold run N times, each in a process of its own
// forked for it (tools/bench/measure_rows.h) (its memory fresh, as a command's one decode finds it, and the slab helper its
// own), and takes the median; the range follows the table. A single cold run moves by half on
// this VM with how fast the host backs fresh memory. The row's own first run then fills its
// caches for the warm runs, untimed.
// --verify adds, untimed, one decode per ptprof row into a sink that digests every event field
// for field (blocks: addresses, counts, ends, mode, flags, tsc, offset, cpu/pid/tid; other
// events: their kind, tsc and offset), and warns where a row's digest differs from ptprof's
// one-piece decode on libipt.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <memory>
#include <cstdio>
#include <functional>
#include <variant>
#include <string>
#include <thread>
#include <vector>

#include "decoders/pt/fast/code_blocks.h"
#include "decoders/pt/flow_session.h"
#include "decoders/pt/image_cache.h"
#include "decoders/pt/libipt_reference.h"
#include "src/model/parted_sink.h"
#include "src/pipeline/session.h"
#include "tools/bench/measure_rows.h"

namespace {

using namespace ptprof;
using bench::Measurement;
using bench::MeasureRows;
using bench::Row;

// Counts instructions and blocks; in parts when the decode is parallel (each thread counts its
// segments'), which a parallel decode of a consumer that takes its stream in parts allows.
class CountingSink : public PartedSink {
 public:
  void OnEvent(const TraceEvent& event) override {
    if (const auto* b = std::get_if<ExecBlock>(&event.body)) {
      insns += b->insns;
      blocks += 1;
    }
  }
  void OnBlocks(const BlockBatch& batch) override {
    for (const PackedEvent& b : batch.blocks) insns += b.insns;
    blocks += batch.blocks.size();
  }
  std::unique_ptr<EventSink> NewPart() const override { return std::make_unique<CountingSink>(); }
  void Fold(std::unique_ptr<EventSink> part) override {
    const auto& counted = static_cast<const CountingSink&>(*part);
    insns += counted.insns;
    blocks += counted.blocks;
  }
  uint64_t insns = 0, blocks = 0;
};

// A digest of the event stream, the same whether a block comes packed in a batch or as an event,
// and however the stream is cut into parts: each event's fields are hashed (FNV-1a), and the
// stream's digest is the polynomial sum of h(event i) * kBase^(n - 1 - i) modulo 2^64, which the
// digests of two pieces give as digest(A) * kBase^|B| + digest(B).
class DigestSink : public PartedSink {
 public:
  void OnEvent(const TraceEvent& event) override {
    if (std::holds_alternative<ExecBlock>(event.body)) {
      PackedEvent packed;
      PackBlock(event, packed);
      Block(packed, event.header.cpu, event.header.pid, event.header.tid);
      return;
    }
    uint64_t h = kFnvStart;
    Mix(h, 0xffff0000u + event.body.index());
    Mix(h, event.header.tsc);
    Mix(h, event.header.offset);
    Add(h);
  }
  void OnBlocks(const BlockBatch& batch) override {
    for (const PackedEvent& b : batch.blocks) Block(b, batch.cpu, batch.pid, batch.tid);
  }
  std::unique_ptr<EventSink> NewPart() const override { return std::make_unique<DigestSink>(); }
  void Fold(std::unique_ptr<EventSink> part) override {
    const auto& other = static_cast<const DigestSink&>(*part);
    digest = digest * other.power_ + other.digest;
    power_ *= other.power_;
  }
  uint64_t digest = 0;

 private:
  static constexpr uint64_t kFnvStart = 0xcbf29ce484222325ull;
  static constexpr uint64_t kBase = 0x9e3779b97f4a7c15ull;  // odd
  void Block(const PackedEvent& b, int32_t cpu, int32_t pid, int32_t tid) {
    uint64_t h = kFnvStart;
    Mix(h, b.first_ip_or_index);
    Mix(h, b.span);
    Mix(h, b.insns);
    Mix(h, b.last_insn_size | b.end << 8 | b.mode << 16 | b.flags << 24);
    Mix(h, b.tsc);
    Mix(h, b.offset);
    Mix(h, static_cast<uint32_t>(cpu) ^ static_cast<uint64_t>(static_cast<uint32_t>(pid)) << 32);
    Mix(h, static_cast<uint32_t>(tid));
    Add(h);
  }
  void Add(uint64_t h) {
    digest = digest * kBase + h;
    power_ *= kBase;
  }
  static void Mix(uint64_t& h, uint64_t value) {
    for (int i = 0; i < 8; ++i) {
      h ^= (value >> (8 * i)) & 0xff;
      h *= 0x100000001b3ull;
    }
  }
  uint64_t power_ = 1;  // kBase^(events so far)
};

// Hands the stream on to `next` as one ordered stream: a consumer that does not take it in parts.
struct OneStream : EventSink {
  explicit OneStream(EventSink& next) : next(next) {}
  void OnEvent(const TraceEvent& event) override { next.OnEvent(event); }
  void OnBlocks(const BlockBatch& batch) override { next.OnBlocks(batch); }
  void OnEnd() override { next.OnEnd(); }
  EventSink& next;
};

}  // namespace

constexpr const char* kUsage =
    "usage: parallel_bench [--repeat N] [--cold N] [--jobs N]... [--psb-segment BYTES]... "
    "[--engine fast|libipt] [--consumer parts|one|both] [--stream NAME] [--no-reference] "
    "[--verify] [--interleave] INPUT\n";

int main(int argc, char** argv) {
  int repeat = 3;
  int cold_runs = 1;
  std::vector<unsigned> jobs;
  std::vector<uint64_t> segment_sizes;
  std::string only_engine;  // empty: both
  std::string consumer = "both";  // on 2+ threads: a consumer in parts, one stream, or both
  bool reference = true;
  bool verify = false;
  bool interleave = false;
  std::string input, stream_name;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--repeat" && i + 1 < argc) repeat = std::max(1, std::atoi(argv[++i]));
    else if (arg == "--cold" && i + 1 < argc) cold_runs = std::max(1, std::atoi(argv[++i]));
    else if (arg == "--jobs" && i + 1 < argc) jobs.push_back(std::max(1, std::atoi(argv[++i])));
    else if (arg == "--psb-segment" && i + 1 < argc) segment_sizes.push_back(std::strtoull(argv[++i], nullptr, 0));
    else if (arg == "--stream" && i + 1 < argc) stream_name = argv[++i];
    else if (arg == "--engine" && i + 1 < argc) only_engine = argv[++i];
    else if (arg == "--consumer" && i + 1 < argc) consumer = argv[++i];
    else if (arg == "--no-reference") reference = false;
    else if (arg == "--verify") verify = true;
    else if (arg == "--interleave") interleave = true;
    else if (input.empty() && !arg.empty() && arg[0] != '-') input = arg;
    else {
      std::fputs(kUsage, stderr);
      return 2;
    }
  }
  if (input.empty()) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  if (consumer != "parts" && consumer != "one" && consumer != "both") {
    std::fprintf(stderr, "parallel_bench: --consumer %s: expected parts, one or both\n", consumer.c_str());
    return 2;
  }
  if (jobs.empty()) jobs = {1, 2};
  if (segment_sizes.empty()) segment_sizes = {0};  // the default
  auto session = OpenSession(input, RawInputOptions{}, false);
  if (!session) {
    std::fprintf(stderr, "parallel_bench: %s\n", session.error().message.c_str());
    return 1;
  }
  // The named stream, else the largest.
  size_t stream = 0;
  for (size_t i = 0; i < session->stream_bytes.size(); ++i) {
    if (!stream_name.empty() ? session->manifest.streams[i].name == stream_name
                             : session->stream_bytes[i].size() > session->stream_bytes[stream].size())
      stream = i;
  }
  if (session->stream_bytes.empty()) {
    std::fprintf(stderr, "parallel_bench: %s: no trace stream\n", input.c_str());
    return 1;
  }
  const std::span<const uint8_t> trace = session->stream_bytes[stream];
  const pt::PtParams params = session->params();

  // The rows, each with its own caches (made by its first, cold, run; kept for the others).
  std::vector<Row> rows;
  std::unique_ptr<pt::PtImageCache> libipt_images;
  rows.push_back(Row{"libipt block decoder (reference)", reference,
                     [&] { libipt_images.reset(); }, [&]() -> uint64_t {
    if (!libipt_images) {
      libipt_images = std::make_unique<pt::PtImageCache>();
      if (!libipt_images->AddAll(session->images)) return 0;
    }
    auto count = pt::RunLibiptDirectly(trace, *libipt_images, params, false);
    return count ? count->insns : 0;
  }});
  // A decode of the stream as a row makes it: on `n` threads in segments of `segment` bytes (0: the
  // default), with `engine` and the code graphs of `graphs`.
  auto request_for = [&](unsigned n, uint64_t segment, pt::FlowEngine engine,
                         pt::fast::CodeGraphPool* graphs) {
    pt::FlowRequest request;
    request.params = params;
    request.jobs = n;
    request.segment_bytes = segment;
    request.engine = engine;
    request.graphs = graphs;
    return request;
  };
  // --verify: the digest of a decode as the row decodes (its caches fresh, as for a cold run).
  auto digest_of = [&](unsigned n, uint64_t segment, pt::FlowEngine engine,
                       bool in_parts = true) -> uint64_t {
    if (!verify) return 0;
    pt::fast::CodeGraphPool own_graphs;
    const pt::FlowRequest request = request_for(n, segment, engine, &own_graphs);
    DigestSink sink;
    OneStream one{sink};
    return pt::DecodeFlow(trace, session->images, request, in_parts ? static_cast<EventSink&>(sink) : one)
               ? sink.digest
               : 1;
  };
  // A ptprof row's state: its code graphs, and what its last run counted and said.
  struct PtprofRow {
    std::unique_ptr<pt::fast::CodeGraphPool> graphs;
    uint64_t blocks = 0;
    std::string note;
  };
  std::deque<PtprofRow> ptprof_rows;
  std::vector<std::function<uint64_t()>> digests(1);  // per row (the reference has none)
  auto add_ptprof = [&](const std::string& name, bool measured, unsigned n, uint64_t segment,
                        pt::FlowEngine engine, bool in_parts) {
    PtprofRow& state = ptprof_rows.emplace_back();
    Row row;
    row.name = name;
    row.measured = measured;
    row.fresh = [&state] { state.graphs.reset(); };
    row.run = [&, n, segment, engine, in_parts]() -> uint64_t {
      if (!state.graphs) state.graphs = std::make_unique<pt::fast::CodeGraphPool>();
      const pt::FlowRequest request = request_for(n, segment, engine, state.graphs.get());
      CountingSink sink;
      OneStream one{sink};
      auto summary = pt::DecodeFlow(trace, session->images, request,
                                    in_parts ? static_cast<EventSink&>(sink) : one);
      if (!summary) return 0;
      state.note = std::to_string(summary->segments) + " segments" +
                   (summary->sequential_because.empty() ? "" : "; sequential: " + summary->sequential_because);
      if (engine == pt::FlowEngine::kFast)
        state.note += "; fast " + std::to_string(summary->fast_segments) + ", libipt " +
                      std::to_string(summary->libipt_segments) +
                      (summary->fallback_because.empty() ? "" : " (" + summary->fallback_because + ")");
      state.blocks = sink.blocks;
      return sink.insns;
    };
    row.blocks = &state.blocks;
    row.note = &state.note;
    rows.push_back(std::move(row));
    digests.push_back(measured ? std::function<uint64_t()>([=, &digest_of] {
      return digest_of(n, segment, engine, in_parts);
    }) : std::function<uint64_t()>());
  };
  // ptprof on libipt, one thread, in one piece: the reference for blocks and events.
  add_ptprof("ptprof libipt, 1 thread", reference, 1, 0, pt::FlowEngine::kLibipt, true);
  for (pt::FlowEngine engine : {pt::FlowEngine::kLibipt, pt::FlowEngine::kFast}) {
    const std::string engine_name = engine == pt::FlowEngine::kFast ? "fast" : "libipt";
    if (!only_engine.empty() && only_engine != engine_name) continue;
    for (unsigned n : jobs) {
      if (n == 1 && engine == pt::FlowEngine::kLibipt) continue;  // measured above
      for (uint64_t segment : segment_sizes) {
        std::string name = "ptprof " + engine_name + ", " + std::to_string(n) + " thread" + (n == 1 ? "" : "s");
        if (segment) name += ", " + std::to_string(segment >> 10) + " KiB";
        if (n == 1 || consumer != "one") add_ptprof(name, true, n, segment, engine, true);
        if (n == 1 || consumer == "parts") continue;
        // The same with a consumer that takes one ordered stream (every event passes the
        // stitching thread), as the consumers that do not take their stream in parts do.
        add_ptprof(name + ", one stream", true, n, segment, engine, false);
      }
    }
  }
  // N whole decodes at once, sharing nothing (the machine's ceiling for N threads).
  struct AtOnceRow {
    std::vector<std::unique_ptr<pt::fast::CodeGraphPool>> graphs;
    uint64_t blocks = 0;
    std::string note;
  };
  std::deque<AtOnceRow> at_once_rows;
  std::vector<std::pair<size_t, unsigned>> at_once;  // (row, N)
  if (only_engine.empty() || only_engine == "fast") {
    for (unsigned n : jobs) {
      if (n < 2) continue;
      AtOnceRow& state = at_once_rows.emplace_back();
      Row row;
      row.name = "fast, 1 thread, " + std::to_string(n) + " at once";
      row.fresh = [&state] { state.graphs.clear(); };
      row.run = [&, n]() -> uint64_t {
        if (state.graphs.empty())
          for (unsigned k = 0; k < n; ++k)
            state.graphs.push_back(std::make_unique<pt::fast::CodeGraphPool>());
        std::vector<uint64_t> insns(n, 0), blocks(n, 0);
        std::vector<std::thread> threads;
        for (unsigned k = 0; k < n; ++k) {
          threads.emplace_back([&, k] {
            const pt::FlowRequest request =
                request_for(1, 0, pt::FlowEngine::kFast, state.graphs[k].get());
            CountingSink sink;
            if (pt::DecodeFlow(trace, session->images, request, sink)) {
              insns[k] = sink.insns;
              blocks[k] = sink.blocks;
            }
          });
        }
        for (std::thread& t : threads) t.join();
        for (unsigned k = 1; k < n; ++k)
          if (insns[k] != insns[0] || blocks[k] != blocks[0]) return 0;  // (a warning follows)
        state.blocks = blocks[0];
        state.note = "each decode the whole stream, nothing shared";
        return insns[0];
      };
      row.blocks = &state.blocks;
      row.note = &state.note;
      at_once.emplace_back(rows.size(), n);
      rows.push_back(std::move(row));
      digests.push_back({});
    }
  }
  std::vector<Measurement> results = MeasureRows(rows, repeat, interleave, cold_runs);
  const uint64_t reference_blocks = results[1].blocks;
  if (verify && reference) {
    for (size_t r = 1; r < results.size(); ++r)
      if (digests[r]) results[r].digest = digests[r]();
  }
  const uint64_t reference_digest = results[1].digest;

  const double mb = static_cast<double>(trace.size()) / 1e6;
  const Measurement& ref = results.front();
  const std::string cold_is =
      cold_runs > 1
          ? "cold: median of " + std::to_string(cold_runs) + " runs, each in a fresh process"
          : std::string("cold run");
  std::printf("input: %s, stream %s, %zu bytes, %s instructions (libipt), %llu model blocks, "
              "%s + best of %d\n",
              input.c_str(), session->manifest.streams[stream].name.c_str(), trace.size(),
              reference ? std::to_string(ref.insns).c_str() : "-",
              static_cast<unsigned long long>(results.back().blocks), cold_is.c_str(), repeat);
  // "1.23x", or "-" without the reference.
  auto ratio = [reference](double reference_time, double time) {
    char text[32] = "-";
    if (reference) std::snprintf(text, sizeof text, "%.2fx", reference_time / time);
    return std::string(text);
  };
  std::printf("%-34s %9s %7s %8s %9s %8s %9s %9s %7s  %s\n", "mode", "cold ms", "cold x",
              "sys ms", "warm ms", "cpu ms", "warm MB/s", "M insn/s", "warm x",
              "(x: libipt's time over this one's; sys: kernel time of all threads, cold; cpu: "
              "all threads, warm)");
  for (const Measurement& m : results) {
    if (m.cold >= 1e30) continue;  // not measured (--no-reference)
    std::printf("%-34s %9.1f %7s %8.1f %9.1f %8.1f %9.1f %9.1f %7s  %s\n", m.name.c_str(),
                m.cold * 1e3, ratio(ref.cold, m.cold).c_str(), m.cold_sys * 1e3, m.warm * 1e3,
                m.warm_cpu * 1e3, mb / m.warm,
                static_cast<double>(m.insns) / 1e6 / m.warm, ratio(ref.warm, m.warm).c_str(),
                m.note.c_str());
    if (reference && m.insns != ref.insns)
      std::printf("  warning: %s decoded %llu instructions, libipt %llu\n", m.name.c_str(),
                  static_cast<unsigned long long>(m.insns), static_cast<unsigned long long>(ref.insns));
    if (reference && m.blocks && m.blocks != reference_blocks)
      std::printf("  warning: %s gave %llu blocks, ptprof libipt on 1 thread %llu\n", m.name.c_str(),
                  static_cast<unsigned long long>(m.blocks),
                  static_cast<unsigned long long>(reference_blocks));
  }
  if (cold_runs > 1) {
    std::printf("cold runs, fastest to slowest (ms):");
    for (const Measurement& m : results)
      if (m.cold < 1e30 && m.cold_max > 0)
        std::printf("  %s %.1f to %.1f;", m.name.c_str(), m.cold_min * 1e3, m.cold_max * 1e3);
    std::printf("\n");
  }
  // The ceiling of N threads beside what ptprof's N threads gained, over the fast one-thread row.
  // The row `name`, or the first of its segment sizes ("NAME, 4 KiB"), in parts (not "one
  // stream").
  auto find_row = [&](const std::string& name) -> const Measurement* {
    const std::string sized = name + ", ";
    for (const Measurement& m : results) {
      if (m.cold >= 1e30) continue;
      if (m.name == name) return &m;
      if (m.name.compare(0, sized.size(), sized) == 0 &&
          m.name.find("one stream") == std::string::npos)
        return &m;
    }
    return nullptr;
  };
  const Measurement* one = find_row("ptprof fast, 1 thread");
  for (const auto& [r, n] : at_once) {
    const Measurement& m = results[r];
    const Measurement* parallel = find_row("ptprof fast, " + std::to_string(n) + " threads");
    if (!one || !parallel || !m.insns) continue;
    std::printf("%u threads: this machine's ceiling (%u whole decodes at once, over one alone) "
                "warm %.2fx; ptprof fast on %u threads over 1: warm %.2fx, cold %.2fx\n",
                n, n, n * one->warm / m.warm, n, one->warm / parallel->warm,
                one->cold / parallel->cold);
  }
  if (verify && reference) {
    for (const Measurement& m : results) {
      if (!m.digest) continue;
      if (m.digest != reference_digest)
        std::printf("  warning: %s gave other events than ptprof libipt on 1 thread (digest %016llx, "
                    "expected %016llx)\n",
                    m.name.c_str(), static_cast<unsigned long long>(m.digest),
                    static_cast<unsigned long long>(reference_digest));
      else
        std::printf("  verified: %s gave the same events (digest %016llx)\n", m.name.c_str(),
                    static_cast<unsigned long long>(m.digest));
    }
  }
  return 0;
}
