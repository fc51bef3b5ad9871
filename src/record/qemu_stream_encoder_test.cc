#include "src/record/qemu_stream_encoder.h"

#include <catch2/catch.hpp>

#include "src/record/qemu/stream_format.h"
#include "src/record/qemu_recorder.h"

using namespace ptprof::record;
namespace sf = ptprof::record::qemu_stream;

namespace {

// Block 0 at 0x1000: nop; nop (falls through to block 1). Block 1 at 0x1002: syscall.
QemuStream TwoBlocks() {
  QemuStream stream;
  stream.blocks.resize(2);
  stream.blocks[0] = {0x1000, 0, 0, 2, 2, true};
  stream.blocks[1] = {0x1002, 2, 2, 1, 2, true};
  stream.sizes = {1, 1, 2};
  stream.code = {0x90, 0x90, 0x0f, 0x05};
  return stream;
}

std::vector<uint32_t> CloneReturning(uint32_t child) {
  // syscall entry (clone, arguments), then its return with the child's tid
  std::vector<uint32_t> words = {sf::kTagSyscall, 56, 0};
  words.resize(sf::kSyscallWords, 0);
  words.insert(words.end(), {sf::kTagSysret, 56, 0, child, 0});
  return words;
}

}  // namespace

TEST_CASE("a thread created by clone starts at its creator's time, whichever words come first") {
  const QemuStream stream = TwoBlocks();
  QemuFlowOptions options;
  options.cycles_per_insn = 10;
  QemuStreamEncoder encoder(stream, options);
  // The parent runs 3 instructions, then its clone returns 8: the child's words came first.
  std::vector<uint32_t> parent = {0, 1};
  const std::vector<uint32_t> clone = CloneReturning(8);
  parent.insert(parent.end(), clone.begin(), clone.end());
  parent.insert(parent.end(), {0, 1});
  const std::vector<uint32_t> child = {0, 1};
  REQUIRE(encoder.OnExec(7, parent.data(), 2));  // blocks before the clone
  REQUIRE(encoder.OnExec(8, child.data(), child.size()));  // waits: its start is not known yet
  REQUIRE(encoder.OnExec(7, parent.data() + 2, parent.size() - 2));
  auto traces = encoder.Finish();
  REQUIRE(traces);
  REQUIRE(traces->size() == 2);
  CHECK((*traces)[0].tid == 7);
  CHECK((*traces)[1].tid == 8);
  CHECK((*traces)[0].tsc_begin == 0);
  CHECK((*traces)[1].tsc_begin == 30);  // 3 instructions of 10 cycles before the clone
  CHECK((*traces)[0].insns == 6);
  CHECK((*traces)[1].insns == 3);
  CHECK((*traces)[1].first_ip == 0x1000);
}

TEST_CASE("a thread whose creator is unknown starts at time 0") {
  const QemuStream stream = TwoBlocks();
  QemuFlowOptions options;
  QemuStreamEncoder encoder(stream, options);
  const std::vector<uint32_t> words = {0, 1};
  REQUIRE(encoder.OnExec(7, words.data(), words.size()));
  REQUIRE(encoder.OnExec(9, words.data(), words.size()));
  auto traces = encoder.Finish();
  REQUIRE(traces);
  REQUIRE(traces->size() == 2);
  CHECK((*traces)[1].tsc_begin == 0);
  CHECK((*traces)[1].insns == 3);
}

namespace {

triggers::TriggerEngine SignalEngine() {
  triggers::SnapshotPolicy policy;
  auto spec = triggers::ParseTrigger("signal=USR2");
  REQUIRE(spec);
  policy.triggers.push_back(*spec);
  return triggers::TriggerEngine(policy);
}

triggers::TriggerEvent Usr2To(uint32_t tid) {
  triggers::TriggerEvent event;
  event.kind = triggers::TriggerEvent::Kind::kSignal;
  event.tid = tid;
  event.time_ns = 1;
  event.signal = 12;  // SIGUSR2
  return event;
}

size_t SignalSnapshots(const std::vector<QemuThreadTrace>& traces, uint32_t tid) {
  size_t n = 0;
  for (const QemuThreadTrace& trace : traces)
    if (trace.tid == tid)
      for (const QemuSnapshot& snapshot : trace.snapshots) n += snapshot.label == "signal=USR2";
  return n;
}

}  // namespace

TEST_CASE("a signal seen before its thread's first words still cuts that thread's snapshot") {
  // A short program can take its signals before the recorder has read any of its stream.
  const QemuStream stream = TwoBlocks();
  auto engine = SignalEngine();
  QemuFlowOptions options;
  options.buffer_size = 4096;
  options.triggers = &engine;
  QemuStreamEncoder encoder(stream, options);
  REQUIRE(encoder.OnTriggerEvent(Usr2To(7)));  // no thread yet
  const std::vector<uint32_t> words = {0, 1};
  REQUIRE(encoder.OnExec(5, words.data(), words.size()));
  REQUIRE(encoder.OnTriggerEvent(Usr2To(7)));  // thread 7 is not known yet
  REQUIRE(encoder.OnExec(7, words.data(), words.size()));  // unknown creator: starts at the end
  REQUIRE(encoder.OnTriggerEvent(Usr2To(9)));  // a thread the stream never shows
  auto traces = encoder.Finish();
  REQUIRE(traces);
  REQUIRE(traces->size() == 2);
  CHECK(SignalSnapshots(*traces, 7) == 2);
  CHECK(SignalSnapshots(*traces, 5) == 1);  // the stranger's signal goes to the first thread
}

namespace {

// Block 0 at 0x1000: nop; jne 0x1000. Block 1 at 0x2000 (a signal handler): nop; jne 0x2000.
// Block 2 at 0x2003: syscall (its rt_sigreturn). Block 3 at 0x1003: nop; jne 0x1003.
QemuStream InterruptedLoop() {
  QemuStream stream;
  stream.code = {0x90, 0x75, 0xfd, 0x90, 0x75, 0xfd, 0x0f, 0x05, 0x90, 0x75, 0xfd};
  stream.sizes = {1, 2, 1, 2, 2, 1, 2};
  stream.blocks = {{0x1000, 0, 0, 2, 3, true},
                   {0x2000, 2, 3, 2, 3, true},
                   {0x2003, 4, 6, 1, 2, true},
                   {0x1003, 5, 8, 2, 3, true}};
  return stream;
}

}  // namespace

TEST_CASE("a signal's handler read in pieces gives what it gives read at once") {
  // Block 0's jne is interrupted (block 1 comes next, neither of its ways); the handler loops,
  // returns with rt_sigreturn, and the thread resumes at the jne's target (block 0 again), which
  // says the jne was taken: only a reader that finds the rt_sigreturn knows (else it takes the
  // fall-through).
  QemuStream stream = InterruptedLoop();
  std::vector<uint32_t> words = {0, 0};
  for (int k = 0; k < 300; ++k) words.push_back(1);
  words.push_back(2);
  const size_t sigreturn = words.size();
  words.insert(words.end(), {sf::kTagSyscall, 15, 0});
  words.resize(sigreturn + sf::kSyscallWords, 0);
  words.insert(words.end(), {0, 3, 3});
  QemuFlowOptions options;
  options.keep_ips = true;
  stream.complete = true;
  stream.threads.push_back({7, words});
  auto whole = EncodeQemuStream(stream, options);
  REQUIRE(whole);
  const QemuThreadTrace& once = whole->threads.at(0);
  CHECK(once.signals == 1);
  // The jne, then the handler; after it the jne's target, then the fall-through.
  REQUIRE(once.ips.size() > 4);
  CHECK(once.ips[3] == 0x1001);
  CHECK(once.ips[4] == 0x2000);
  const std::vector<uint64_t> after = {0x2003, 0x1000, 0x1001, 0x1003, 0x1004, 0x1003};
  CHECK(std::equal(after.begin(), after.end(), once.ips.end() - 6));
  for (const size_t piece : {1, 2, 3, 7, 64}) {
    QemuStreamEncoder encoder(stream, options);
    for (size_t at = 0; at < words.size(); at += piece)
      REQUIRE(encoder.OnExec(7, words.data() + at, std::min(piece, words.size() - at)));
    auto traces = encoder.Finish();
    REQUIRE(traces);
    const QemuThreadTrace& pieces = traces->at(0);
    CHECK(pieces.signals == 1);
    CHECK(pieces.ips == once.ips);
    CHECK(pieces.pt == once.pt);
  }
}
