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
