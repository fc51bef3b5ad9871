#include "decoders/pt/part_segment.h"

#include <catch2/catch.hpp>

#include "src/model/event_equality.h"

using namespace ptprof;
using namespace ptprof::pt;

namespace {

// The uncut decode: block i at offset 10 * i.
TraceEvent Block(size_t i) {
  ExecBlock block;
  block.first_ip = 0x1000 + 16 * i;
  block.last_ip = block.first_ip + 4;
  block.insns = 2;
  TraceEvent event{EventHeader{}, block};
  event.header.offset = 10 * i;
  return event;
}

class Collect : public EventSink {
 public:
  void OnEvent(const TraceEvent& event) override { events.push_back(event); }
  std::vector<TraceEvent> events;
};

// The segment [5000, 22000), cut at 20000, trusted to 21000; its decode gives blocks 500 to 2199.
constexpr TraceSegment kRange{5000, 20000, 21000, 22000};
constexpr size_t kFirst = 500, kEnd = 2200;

// Feeds blocks [from, to) one by one, or packed in batches of `batch`.
void Feed(PartSegment& segment, size_t from, size_t to, size_t batch) {
  if (!batch) {
    for (size_t i = from; i < to; ++i) segment.OnEvent(Block(i));
    return;
  }
  std::vector<PackedEvent> packed;
  for (size_t i = from; i < to; ++i) {
    packed.emplace_back();
    PackBlock(Block(i), packed.back());
    if (packed.size() == batch || i + 1 == to) {
      BlockBatch b;
      b.blocks = packed;
      segment.OnBlocks(b);
      packed.clear();
    }
  }
}

void RequireBlocks(const EventChunks& events, size_t first, size_t count) {
  REQUIRE(events.size() == count);
  for (size_t i = 0; i < count; ++i) {
    INFO("event " << i);
    REQUIRE(SameEvent(events[i], Block(first + i)));
  }
}

void RequireBlocks(const std::vector<TraceEvent>& events, size_t first, size_t count) {
  REQUIRE(events.size() == count);
  for (size_t i = 0; i < count; ++i) {
    INFO("event " << i);
    REQUIRE(SameEvent(events[i], Block(first + i)));
  }
}

}  // namespace

TEST_CASE("A part segment holds back its head and tail and passes the rest to its part",
          "[part_segment]") {
  for (size_t batch : {size_t{0}, size_t{1}, size_t{64}, size_t{1000}}) {
    INFO("batches of " << batch);
    EventChunkPool pool;
    Collect part;
    // The previous segment is trusted to 6000: the head runs to block 600 and 512 more.
    PartSegment segment(part, pool, kRange, 6000);
    Feed(segment, kFirst, kEnd, batch);
    segment.BeforeFinish();
    segment.Finish();
    CHECK_FALSE(segment.whole());
    const size_t head = 100 + PartSegment::kHeadMargin;
    RequireBlocks(segment.head().events, kFirst, head);
    CHECK(segment.head().trusted == head);
    RequireBlocks(part.events, kFirst + head, 2000 - kFirst - head);  // to the cut
    RequireBlocks(segment.tail().events, 2000, 200);
    CHECK(segment.tail_base() == 2000 - kFirst);
    CHECK(segment.tail().at_cut == 0);
    CHECK(segment.tail().trusted == 100);  // to 21000
  }
}

TEST_CASE("A part segment decoded again after a handover passes nothing twice",
          "[part_segment]") {
  EventChunkPool pool;
  Collect part;
  PartSegment segment(part, pool, kRange, 6000);
  Feed(segment, kFirst, 1500, 64);
  segment.Redo();
  Feed(segment, kFirst, kEnd, 100);
  segment.BeforeFinish();
  segment.Finish();
  RequireBlocks(segment.head().events, kFirst, 612);
  RequireBlocks(part.events, kFirst + 612, 2000 - kFirst - 612);
  RequireBlocks(segment.tail().events, 2000, 200);
}

TEST_CASE("A part segment whose head reaches its cut holds every event", "[part_segment]") {
  EventChunkPool pool;
  Collect part;
  PartSegment segment(part, pool, kRange, 19800);
  Feed(segment, kFirst, kEnd, 64);
  segment.Finish();  // the decoder ended its bytes without BeforeFinish: nothing untrusted else
  CHECK(segment.whole());
  CHECK(part.events.empty());
  RequireBlocks(segment.head().events, kFirst, kEnd - kFirst);
  CHECK(segment.head().trusted == 2100 - kFirst);  // to 21000
}

TEST_CASE("The first segment has no head; the last no tail", "[part_segment]") {
  EventChunkPool pool;
  SECTION("first") {
    Collect part;
    PartSegment segment(part, pool, TraceSegment{0, 20000, 21000, 22000}, 0);
    Feed(segment, 0, kEnd, 64);
    segment.BeforeFinish();
    segment.Finish();
    CHECK(segment.head().events.empty());
    RequireBlocks(part.events, 0, 2000);
    RequireBlocks(segment.tail().events, 2000, 200);
  }
  SECTION("last") {
    Collect part;
    PartSegment segment(part, pool, TraceSegment{5000, 22000, 22000, 22000}, 6000);
    Feed(segment, kFirst, kEnd, 64);
    segment.BeforeFinish();
    segment.Finish();
    CHECK_FALSE(segment.whole());
    RequireBlocks(segment.head().events, kFirst, 612);
    RequireBlocks(part.events, kFirst + 612, kEnd - kFirst - 612);
    CHECK(segment.tail().events.empty());
  }
}

TEST_CASE("A part segment of instructions holds a longer head (the wider join windows)",
          "[part_segment]") {
  // Instruction i at offset i / 10 + 5000 (ten a packet); the previous segment is trusted to
  // 5100: the head runs to instruction 1000 and kInsnHeadMargin more.
  auto insn = [](size_t i) {
    Instruction in;
    in.ip = 0x1000 + i;
    in.size = 1;
    TraceEvent event{EventHeader{}, in};
    event.header.offset = 5000 + i / 10;
    return event;
  };
  EventChunkPool pool;
  Collect part;
  PartSegment segment(part, pool, kRange, 5100);
  const size_t count = 1000 + PartSegment::kInsnHeadMargin + 500;
  for (size_t i = 0; i < count; ++i) segment.OnEvent(insn(i));
  segment.BeforeFinish();
  segment.Finish();
  const size_t head = 1000 + PartSegment::kInsnHeadMargin;
  REQUIRE(segment.head().events.size() == head);
  CHECK(SameEvent(segment.head().events[head - 1], insn(head - 1)));
  REQUIRE(part.events.size() == 500);
  CHECK(SameEvent(part.events.front(), insn(head)));
}
