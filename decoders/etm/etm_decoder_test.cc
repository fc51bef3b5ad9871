#include "decoders/etm/etm_decoder.h"

#include <new>
#include <random>
#include <string>
#include <sys/stat.h>

#include <catch2/catch.hpp>

#include "decoders/etm/etm_piece_workers.h"
#include "decoders/etm/snapshot_memory.h"
#include "src/model/collecting_sink.h"
#include "sideband/file_bytes.h"
#include "tests/unit/child_process.h"

using namespace ptprof;
using namespace ptprof::etm;

namespace {

using Collect = testing::CollectingSink;

std::string Snap(const std::string& name) {
  return std::string(SHARED_TESTDATA) + "/opencsd/snapshots/" + name;
}

// ETMv4 source ETM_0 (trace ID 0x10) of an Armv8-A core, with TRCCONFIGR `configr`.
SourceConfig EtmV4Source(uint32_t configr) {
  SourceConfig cfg;
  cfg.source = "ETM_0";
  cfg.protocol = Protocol::kEtmV4;
  cfg.arch = {ArchVersion::kV8, CoreProfile::kA};
  cfg.registers = {{"TRCCONFIGR", configr}, {"TRCTRACEIDR", 0x10}, {"TRCIDR0", 0x28000EA1},
                   {"TRCIDR1", 0x4100F403}, {"TRCIDR2", 0x488}};
  return cfg;
}

bool Exists(const std::string& p) {
  struct stat st {};
  return stat(p.c_str(), &st) == 0;
}

}  // namespace

TEST_CASE("the a57 single-step snapshot decodes to one range and one exception") {
  if (!Exists(Snap("a57_single_step"))) {
    WARN("SKIP: ../shared/testdata/opencsd is absent");
    return;
  }
  auto snap = LoadSnapshot(Snap("a57_single_step"));
  REQUIRE(snap);
  auto plan = PlanBuffer(*snap, "");
  REQUIRE(plan);
  auto dec = EtmDecoder::Create(BufferFormat::kCoreSightFrames, plan->sources, {});
  REQUIRE(dec);
  std::vector<std::string> warnings;
  auto memory = LoadSnapshotMemory(*snap, *plan, warnings);
  REQUIRE(memory);
  for (const MemoryImage& m : *memory) REQUIRE((*dec)->AddMemory(m));
  auto trace = ReadFileBytes(plan->buffer.file);
  REQUIRE(trace);
  Collect sink;
  EtmDecodeStats stats = (*dec)->Decode(*trace, sink);
  CHECK(sink.ended);
  CHECK(stats.ranges == 1);
  CHECK(stats.instructions == 1);
  bool saw_exception = false;
  for (const TraceEvent& e : sink.events) {
    if (const auto* b = std::get_if<ExecBlock>(&e.body)) {
      CHECK(b->first_ip == 0xfffeb448);
      CHECK(b->mode == ExecMode::kA64);
    }
    if (const auto* x = std::get_if<Exception>(&e.body)) {
      saw_exception = true;
      CHECK(x->number == 1);
      CHECK(x->return_ip == 0xfffeb44c);
    }
  }
  CHECK(saw_exception);
}

TEST_CASE("random bytes as trace give gaps or nothing, never a crash") {
  const SourceConfig cfg = EtmV4Source(0);
  std::mt19937 rng(7);
  for (BufferFormat format : {BufferFormat::kCoreSightFrames, BufferFormat::kSingleSource}) {
    auto dec = EtmDecoder::Create(format, {cfg}, {});
    REQUIRE(dec);
    std::vector<uint8_t> junk(4096);
    for (auto& b : junk) b = static_cast<uint8_t>(rng());
    Collect sink;
    EtmDecodeStats stats = (*dec)->Decode(junk, sink);
    CHECK(sink.ended);
    CHECK(stats.bytes == junk.size());
  }
}

TEST_CASE("overlapping memory is refused with a message naming it") {
  const SourceConfig cfg = EtmV4Source(0);
  auto dec = EtmDecoder::Create(BufferFormat::kCoreSightFrames, {cfg}, {});
  REQUIRE(dec);
  MemoryImage a{0x1000, "", std::make_shared<const std::vector<uint8_t>>(64, 0), "a.ini:[dump1]"};
  MemoryImage b{0x1010, "", std::make_shared<const std::vector<uint8_t>>(64, 1), "b.ini:[dump1]"};
  REQUIRE((*dec)->AddMemory(a));
  auto refused = (*dec)->AddMemory(b);
  REQUIRE(!refused);
  CHECK(refused.error().message ==
        "b.ini:[dump1]: memory at 0x1010-0x1050 not added: it overlaps a.ini:[dump1]");
}

TEST_CASE("a formatted buffer cut inside a frame decodes its whole frames and reports the rest") {
  const SourceConfig cfg = EtmV4Source(0);
  auto dec = EtmDecoder::Create(BufferFormat::kCoreSightFrames, {cfg}, {});
  REQUIRE(dec);
  std::vector<uint8_t> frames(16 * 4 + 7, 0);
  Collect sink;
  EtmDecodeStats stats = (*dec)->Decode(frames, sink);
  CHECK(stats.fatal_errors == 0);
  REQUIRE(!sink.events.empty());
  const auto* gap = std::get_if<TraceGap>(&sink.events.back().body);
  REQUIRE(gap);
  CHECK(gap->reason == GapReason::kTruncated);
  CHECK(sink.events.back().header.offset == 64);
}

TEST_CASE("a full decoder lists packets too (its elements are dropped, not sent to a missing sink)") {
  if (!Exists(Snap("a57_single_step"))) {
    WARN("SKIP: ../shared/testdata/opencsd is absent");
    return;
  }
  auto snap = LoadSnapshot(Snap("a57_single_step"));
  REQUIRE(snap);
  auto plan = PlanBuffer(*snap, "");
  REQUIRE(plan);
  auto dec = EtmDecoder::Create(BufferFormat::kCoreSightFrames, plan->sources, {});
  REQUIRE(dec);
  std::vector<std::string> warnings;
  auto memory = LoadSnapshotMemory(*snap, *plan, warnings);
  REQUIRE(memory);
  for (const MemoryImage& m : *memory) REQUIRE((*dec)->AddMemory(m));
  auto trace = ReadFileBytes(plan->buffer.file);
  REQUIRE(trace);
  std::vector<std::string> lines;
  (*dec)->ListPackets(*trace, [&](const std::string& l) { lines.push_back(l); });
  CHECK(!lines.empty());
  CHECK(lines.front().rfind("Idx:", 0) == 0);
}

namespace {

// A damaged ETMv4 stream (found by tools/fuzz.sh etm) on which libopencsd 1.3.3's
// processException reads a stale element, and the configuration it crashes under.
const std::vector<uint8_t> kCrashingStream = {
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0x21, 0x00,
    0x04, 0x81, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7b, 0x7b, 0x04, 0x01, 0x15, 0x00, 0xbb,
    0xf2, 0x00, 0x00, 0x06, 0x00, 0x00, 0x00, 0x9d, 0x00, 0xf7, 0x07, 0x03};

SourceConfig CrashingConfig() { return EtmV4Source(0x18c1); }

// `copies` copies of the crashing stream, each at the start of a 4 KiB chunk.
std::vector<uint8_t> CrashingChunks(size_t copies) {
  std::vector<uint8_t> trace;
  for (size_t i = 0; i < copies; ++i) {
    trace.insert(trace.end(), kCrashingStream.begin(), kCrashingStream.end());
    trace.resize((i + 1) * 4096, 0);
  }
  return trace;
}

// The gaps that say libopencsd crashed: offset and text.
std::vector<std::pair<uint64_t, std::string>> Crashes(const std::vector<TraceEvent>& events) {
  std::vector<std::pair<uint64_t, std::string>> crashes;
  for (const TraceEvent& e : events) {
    const auto* gap = std::get_if<TraceGap>(&e.body);
    if (gap && gap->detail.find("libopencsd crashed") != std::string::npos)
      crashes.emplace_back(e.header.offset, gap->detail);
  }
  return crashes;
}

}  // namespace

TEST_CASE("a crash inside libopencsd becomes a gap, and a new decoder goes on after it") {
  const std::vector<uint8_t> trace = CrashingChunks(2);
  auto dec = EtmDecoder::Create(BufferFormat::kSingleSource, {CrashingConfig()}, {});
  REQUIRE(dec);
  Collect sink;
  EtmDecodeStats stats = (*dec)->Decode(trace, sink);
  CHECK(sink.ended);
  const auto crashes = Crashes(sink.events);
  bool after = false;  // an event of the decode after the skipped chunk
  for (const TraceEvent& e : sink.events) after = after || e.header.offset >= 4096;
  // (Whether the second copy crashes the new tree too depends on what the library's stale read
  // finds there: not checked.)
  REQUIRE(!crashes.empty());
  CHECK(stats.fatal_errors >= 1);
  CHECK(crashes[0].first == 0);
  CHECK(crashes[0].second ==
        "decoder error at offset 0x0: libopencsd crashed (SIGSEGV) decoding the trace from here; "
        "the 4096 bytes up to offset 0x1000 are skipped and a new decoder goes on");
  CHECK(after);
}

TEST_CASE("a decoder gives up on a buffer that crashes libopencsd 64 times") {
  const std::vector<uint8_t> trace = CrashingChunks(100);
  auto dec = EtmDecoder::Create(BufferFormat::kSingleSource, {CrashingConfig()}, {});
  REQUIRE(dec);
  Collect sink;
  (*dec)->Decode(trace, sink);
  CHECK(sink.ended);
  const auto crashes = Crashes(sink.events);
  REQUIRE(!crashes.empty());
  CHECK(crashes.size() <= 64);
  if (crashes.size() == 64) {
    const uint64_t at = crashes.back().first;
    CHECK(crashes.back().second.find("64 times in this buffer now: the rest of it (" +
                                     std::to_string(trace.size() - at) +
                                     " bytes) is not decoded") != std::string::npos);
    for (const TraceEvent& e : sink.events) CHECK(e.header.offset <= at);
  }
}

// PieceWorkers (etm_piece_workers.h) with decoders of one ETMv4 source.
PieceWorkers<int> IntPieces(size_t pieces, unsigned jobs,
                            std::function<void(size_t, EtmDecoder&, int&)> decode) {
  return PieceWorkers<int>(
      pieces, jobs,
      [] { return EtmDecoder::Create(BufferFormat::kSingleSource, {EtmV4Source(0)}, {}); },
      [] { return 0; }, std::move(decode));
}

TEST_CASE("PieceWorkers throws what a piece's decode threw, on the stitching thread") {
  auto workers = IntPieces(10, 2, [](size_t i, EtmDecoder&, int& piece) {
    if (i == 3) throw std::bad_alloc();
    piece = static_cast<int>(i);
  });
  REQUIRE(workers.Start());
  size_t taken = 0;
  CHECK_THROWS_AS(
      [&] {
        for (; taken < 10; ++taken) {
          auto piece = workers.Take(taken);
          REQUIRE(piece);
          CHECK(*piece == static_cast<int>(taken));
        }
      }(),
      std::bad_alloc);
  CHECK(taken <= 3);
  workers.Stop();
}

TEST_CASE("PieceWorkers says so when no decoding thread can be started") {
  const ptprof::testing::ChildRun run = ptprof::testing::RunWithoutThreads([](int out) {
    auto workers = IntPieces(10, 2, [](size_t, EtmDecoder&, int&) {});
    auto started = workers.Start();
    const std::string said = started ? "started" : started.error().message;
    if (write(out, said.data(), said.size()) < 0) _exit(2);
  });
  CHECK(run.Exited(0));
  if (run.output == ptprof::testing::kThreadStarted) {
    WARN("the limit did not keep a thread from starting here: not tested");
    return;
  }
  CHECK(run.output.rfind("cannot start a decoding thread: ", 0) == 0);
}
