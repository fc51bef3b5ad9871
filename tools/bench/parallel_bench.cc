// parallel_bench: decode throughput of ptprof's block flow on one thread and on several (PSB
// segments decoded at once and stitched), beside libipt's block decoder driven directly, on the
// same stream of a .ptar, perf.data or raw trace in the same run. Prints, per mode, the first
// run with empty caches (cold: the images are loaded, libipt's block cache and ptprof's code
// graph and TNT runs are built) and the best of the runs that find the caches the first left
// (warm; every mode runs once per round, --repeat rounds): MB/s, M insn/s and the ratio to
// libipt's block decoder, cold to cold and warm to warm,
// and checks that every mode decoded the same number of instructions. Several threads are
// measured twice: with the counting consumer taking the stream in parts (each thread counts what
// it decodes, src/model/parted_sink.h) and as one ordered stream ("one stream": every event
// passes the thread that stitches the segments, as for a consumer that needs one stream).
//
//   parallel_bench [--repeat N] [--jobs N]... [--psb-segment BYTES]... [--engine fast|libipt]
//                  [--stream NAME] [--no-reference] [--verify] INPUT
//
// --no-reference leaves out the libipt rows (to profile ptprof's rows alone; no ratios then).
// --verify adds, untimed, one decode per ptprof row into a sink that digests every event field
// for field (blocks: addresses, counts, ends, mode, flags, tsc, offset, cpu/pid/tid; other
// events: their kind, tsc and offset), and warns where a row's digest differs from ptprof's
// one-piece decode on libipt.
#include <algorithm>
#include <chrono>
#include <deque>
#include <cstdio>
#include <functional>
#include <variant>
#include <string>
#include <vector>

#include "decoders/pt/fast/code_blocks.h"
#include "decoders/pt/flow_session.h"
#include "decoders/pt/image_cache.h"
#include "decoders/pt/libipt_reference.h"
#include "src/model/parted_sink.h"
#include "src/pipeline/session.h"

namespace {

using namespace ptprof;

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

struct Measurement {
  std::string name;
  double cold = 0;  // seconds of the first run
  double warm = 1e30;  // the best of the others
  uint64_t insns = 0;
  uint64_t blocks = 0;  // model blocks, for ptprof's rows (its one-piece decode on libipt is the reference)
  std::string note;
  uint64_t digest = 0;  // --verify: the digest of its events (0: not verified)
};

// One row of the table: how to empty its caches and how to run it once (returning the
// instructions counted; `blocks`, when set, holds the blocks the last run gave and `note` what
// it said).
struct Row {
  Measurement m;
  std::function<void()> fresh;
  std::function<uint64_t()> run;
  const uint64_t* blocks = nullptr;
  const std::string* note = nullptr;
};

// Runs every row once after emptying its caches (cold), then `repeat` rounds in which every row
// runs once more with warm caches, keeping each row's best. Rounds rather than one row's repeats
// back to back: the speed of a shared machine drifts over seconds, and a row measured only in a
// slow spell would be compared with rows measured in a fast one.
void MeasureRows(std::vector<Row>& rows, int repeat) {
  auto time = [](Row& row) {
    auto start = std::chrono::steady_clock::now();
    row.m.insns = row.run();
    if (row.blocks) row.m.blocks = *row.blocks;
    if (row.note) row.m.note = *row.note;
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  for (Row& row : rows) {
    if (!row.run) continue;  // not measured
    row.fresh();
    row.m.cold = time(row);
  }
  for (int i = 0; i < repeat; ++i) {
    for (Row& row : rows) {
      if (row.run) row.m.warm = std::min(row.m.warm, time(row));
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  int repeat = 3;
  std::vector<unsigned> jobs;
  std::vector<uint64_t> segment_sizes;
  std::string only_engine;  // empty: both
  bool reference = true;
  bool verify = false;
  std::string input, stream_name;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--repeat" && i + 1 < argc) repeat = std::max(1, std::atoi(argv[++i]));
    else if (arg == "--jobs" && i + 1 < argc) jobs.push_back(std::max(1, std::atoi(argv[++i])));
    else if (arg == "--psb-segment" && i + 1 < argc) segment_sizes.push_back(std::strtoull(argv[++i], nullptr, 0));
    else if (arg == "--stream" && i + 1 < argc) stream_name = argv[++i];
    else if (arg == "--engine" && i + 1 < argc) only_engine = argv[++i];
    else if (arg == "--no-reference") reference = false;
    else if (arg == "--verify") verify = true;
    else if (input.empty() && !arg.empty() && arg[0] != '-') input = arg;
    else {
      std::fprintf(stderr, "usage: parallel_bench [--repeat N] [--jobs N]... [--psb-segment BYTES]... [--engine fast|libipt] [--stream NAME] [--no-reference] [--verify] INPUT\n");
      return 2;
    }
  }
  if (input.empty()) {
    std::fprintf(stderr, "usage: parallel_bench [--repeat N] [--jobs N]... [--psb-segment BYTES]... [--engine fast|libipt] [--stream NAME] [--no-reference] [--verify] INPUT\n");
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

  std::vector<Row> rows;
  // A row; `run` empty: not measured (--no-reference).
  auto add = [&rows](const std::string& name, std::function<void()> fresh,
                     std::function<uint64_t()> run, const uint64_t* blocks = nullptr,
                     const std::string* note = nullptr) {
    Row row;
    row.m.name = name;
    row.fresh = std::move(fresh);
    row.run = std::move(run);
    row.blocks = blocks;
    row.note = note;
    if (!row.run) row.m.cold = row.m.warm = 1e30;
    rows.push_back(std::move(row));
  };
  // Each row's caches: made by its cold run, kept for the warm ones.
  std::unique_ptr<pt::PtImageCache> libipt_images;
  add("libipt block decoder (reference)", [&] { libipt_images.reset(); },
      !reference ? std::function<uint64_t()>() : [&]() -> uint64_t {
        if (!libipt_images) {
          libipt_images = std::make_unique<pt::PtImageCache>();
          if (!libipt_images->AddAll(session->images)) return 0;
        }
        auto count = pt::RunLibiptDirectly(trace, *libipt_images, params, false);
        return count ? count->insns : 0;
      });
  // ptprof's rows, each with its own code graphs (warm from its cold run) and what it counted.
  struct PtprofRow {
    unsigned jobs;
    uint64_t segment;
    pt::FlowEngine engine;
    bool in_parts;
    std::unique_ptr<pt::fast::CodeGraphPool> graphs;
    uint64_t blocks = 0;
    std::string note;
  };
  std::deque<PtprofRow> ptprof_rows;  // stable addresses for the rows' pointers
  // --verify: the digest of a decode as the row decodes (its caches fresh, as for a cold run).
  auto digest_of = [&](const PtprofRow& r) -> uint64_t {
    if (!verify) return 0;
    pt::fast::CodeGraphPool own_graphs;
    pt::FlowRequest request;
    request.params = params;
    request.jobs = r.jobs;
    request.segment_bytes = r.segment;
    request.engine = r.engine;
    request.graphs = &own_graphs;
    DigestSink sink;
    OneStream one{sink};
    return pt::DecodeFlow(trace, session->images, request,
                          r.in_parts ? static_cast<EventSink&>(sink) : one)
               ? sink.digest
               : 1;
  };
  auto add_ptprof = [&](const std::string& name, unsigned n, uint64_t segment,
                        pt::FlowEngine engine, bool in_parts, bool measured) {
    PtprofRow& r = ptprof_rows.emplace_back(PtprofRow{n, segment, engine, in_parts, nullptr, 0, {}});
    std::function<uint64_t()> run;
    if (measured) {
      run = [&, &r = r]() -> uint64_t {
        if (!r.graphs) r.graphs = std::make_unique<pt::fast::CodeGraphPool>();
        pt::FlowRequest request;
        request.params = params;
        request.jobs = r.jobs;
        request.segment_bytes = r.segment;
        request.engine = r.engine;
        request.graphs = r.graphs.get();
        CountingSink sink;
        OneStream one{sink};
        auto summary = pt::DecodeFlow(trace, session->images, request,
                                      r.in_parts ? static_cast<EventSink&>(sink) : one);
        if (!summary) return 0;
        r.note = std::to_string(summary->segments) + " segments" +
                 (summary->sequential_because.empty() ? ""
                                                      : "; sequential: " + summary->sequential_because);
        if (r.engine == pt::FlowEngine::kFast)
          r.note += "; fast " + std::to_string(summary->fast_segments) + ", libipt " +
                    std::to_string(summary->libipt_segments) +
                    (summary->fallback_because.empty() ? "" : " (" + summary->fallback_because + ")");
        r.blocks = sink.blocks;
        return sink.insns;
      };
    }
    add(name, [&r] { r.graphs.reset(); }, std::move(run), &r.blocks, &r.note);
  };
  add_ptprof("ptprof libipt, 1 thread", 1, 0, pt::FlowEngine::kLibipt, true, reference);
  for (pt::FlowEngine engine : {pt::FlowEngine::kLibipt, pt::FlowEngine::kFast}) {
    const std::string engine_name = engine == pt::FlowEngine::kFast ? "fast" : "libipt";
    if (!only_engine.empty() && only_engine != engine_name) continue;
    for (unsigned n : jobs) {
      if (n == 1 && engine == pt::FlowEngine::kLibipt) continue;  // the row above
      for (uint64_t segment : segment_sizes) {
        std::string name = "ptprof " + engine_name + ", " + std::to_string(n) + " thread" + (n == 1 ? "" : "s");
        if (segment) name += ", " + std::to_string(segment >> 10) + " KiB";
        add_ptprof(name, n, segment, engine, true, true);
        if (n == 1) continue;
        // The same with a consumer that takes one ordered stream (every event passes the
        // stitching thread), as the consumers that do not take their stream in parts do.
        add_ptprof(name + ", one stream", n, segment, engine, false, true);
      }
    }
  }
  MeasureRows(rows, repeat);
  // --verify, untimed, after the measurements.
  for (size_t i = 1; i < rows.size(); ++i) {
    if (rows[i].run) rows[i].m.digest = digest_of(ptprof_rows[i - 1]);
  }
  const uint64_t reference_blocks = rows[1].m.blocks;
  const uint64_t reference_digest = rows[1].m.digest;
  std::vector<Measurement> results;
  for (const Row& row : rows) results.push_back(row.m);

  const double mb = static_cast<double>(trace.size()) / 1e6;
  const Measurement& ref = results.front();
  std::printf("input: %s, stream %s, %zu bytes, %s instructions (libipt), %llu model blocks, "
              "cold run + best of %d rounds\n",
              input.c_str(), session->manifest.streams[stream].name.c_str(), trace.size(),
              reference ? std::to_string(ref.insns).c_str() : "-",
              static_cast<unsigned long long>(results.back().blocks), repeat);
  // "1.23x", or "-" without the reference.
  auto ratio = [reference](double reference_time, double time) {
    char text[32] = "-";
    if (reference) std::snprintf(text, sizeof text, "%.2fx", reference_time / time);
    return std::string(text);
  };
  std::printf("%-34s %9s %7s %9s %9s %9s %7s  %s\n", "mode", "cold ms", "cold x", "warm ms",
              "warm MB/s", "M insn/s", "warm x", "(x: libipt's time over this one's)");
  for (const Measurement& m : results) {
    if (m.cold >= 1e30) continue;  // not measured (--no-reference)
    std::printf("%-34s %9.1f %7s %9.1f %9.1f %9.1f %7s  %s\n", m.name.c_str(), m.cold * 1e3,
                ratio(ref.cold, m.cold).c_str(), m.warm * 1e3, mb / m.warm,
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
