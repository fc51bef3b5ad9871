#include "src/model/block_batch.h"

#include <catch2/catch.hpp>

#include "src/model/event_equality.h"
#include "src/model/event_sink.h"

using namespace ptprof;

namespace {

TraceEvent Block(uint64_t first_ip, uint64_t tsc, uint64_t offset, bool speculative = false) {
  ExecBlock block;
  block.first_ip = first_ip;
  block.last_ip = first_ip + 0x12;
  block.insns = 7;
  block.last_insn_size = 2;
  block.end = BlockEnd::kCondNotTaken;
  block.mode = ExecMode::k64Bit;
  block.speculative = speculative;
  TraceEvent event{EventHeader{}, block};
  event.header.tsc = tsc;
  event.header.offset = offset;
  event.header.cpu = 2;
  event.header.pid = 10;
  event.header.tid = 11;
  return event;
}

class Collect : public EventSink {
 public:
  void OnEvent(const TraceEvent& event) override { events.push_back(event); }
  std::vector<TraceEvent> events;
};

class TimesTen : public BlockClock {
 public:
  uint64_t TimeOf(uint64_t tsc) const override { return tsc * 10; }
};

}  // namespace

TEST_CASE("A packed block unpacks to the event it was packed from", "[block_batch]") {
  for (const TraceEvent& event : {Block(0x401000, 0x99, 0x40), Block(0xffffffff81000000,
                                                                    kUnknownTime, 0, true)}) {
    REQUIRE(Packable(event));
    PackedEvent packed;
    PackBlock(event, packed);
    TraceEvent back{EventHeader{}, Marker{}};
    UnpackBlock(packed, event.header.cpu, event.header.pid, event.header.tid, back);
    CHECK(SameEvent(event, back));
  }
}

TEST_CASE("What does not pack", "[block_batch]") {
  TraceEvent timed = Block(0x1000, 5, 0);
  timed.header.time_ns = 50;
  CHECK_FALSE(Packable(timed));
  TraceEvent wide = Block(0x1000, 5, 0);
  std::get<ExecBlock>(wide.body).last_ip = 0x1000 + (uint64_t{1} << 33);
  CHECK_FALSE(Packable(wide));
  CHECK_FALSE(Packable(TraceEvent{EventHeader{}, TraceGap{}}));
}

TEST_CASE("A sink takes a batch as the events it stands for, with the clock's time",
          "[block_batch]") {
  std::vector<PackedEvent> packed(3);
  std::vector<TraceEvent> events = {Block(0x1000, 1, 0), Block(0x2000, 2, 8),
                                    Block(0x3000, kUnknownTime, 9)};
  for (size_t i = 0; i < events.size(); ++i) PackBlock(events[i], packed[i]);
  BlockBatch batch;
  batch.blocks = packed;
  batch.cpu = 2;
  batch.pid = 10;
  batch.tid = 11;
  Collect plain;
  plain.OnBlocks(batch);
  REQUIRE(plain.events.size() == 3);
  for (size_t i = 0; i < 3; ++i) CHECK(SameEvent(plain.events[i], events[i]));

  TimesTen clock;
  batch.clock = &clock;
  Collect timed;
  timed.OnBlocks(batch);
  REQUIRE(timed.events.size() == 3);
  CHECK(timed.events[0].header.time_ns == 10);
  CHECK(timed.events[1].header.time_ns == 20);
  CHECK(timed.events[2].header.time_ns == kUnknownTime);  // no tsc, no time
  CHECK(batch.TimeNs(1) == 20);
}

TEST_CASE("a batch's runs are found at their first block, and only whole") {
  std::vector<PackedEvent> blocks(10);
  const int a = 0, b = 0, c = 0;
  const std::vector<BatchRun> runs = {
      {&blocks[1], &a, 3}, {&blocks[5], &b, 2}, {&blocks[8], &c, 2}};
  BlockBatch batch;
  batch.blocks = blocks;
  batch.runs = runs;
  size_t next = 0;
  CHECK(batch.RunAt(0, next) == nullptr);
  CHECK(batch.RunAt(1, next) == &runs[0]);
  CHECK(batch.RunAt(2, next) == nullptr);
  CHECK(batch.RunAt(5, next) == &runs[1]);  // runs passed by are skipped
  CHECK(batch.RunAt(8, next) == &runs[2]);
  CHECK(batch.RunAt(9, next) == nullptr);
  // Part of the batch (as a stage that cuts it passes it on): a run that begins before it or
  // ends after it is none.
  BlockBatch part = batch;
  part.blocks = std::span<const PackedEvent>(blocks).subspan(2, 7);  // blocks 2 to 8
  next = 0;
  CHECK(part.RunAt(0, next) == nullptr);      // block 2, inside the first run
  CHECK(part.RunAt(3, next) == &runs[1]);     // block 5
  CHECK(part.RunAt(6, next) == nullptr);      // block 8: its run ends past the part
}
