#include "decoders/pt/streamed_segment.h"

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

// A decode that starts at a PSB: a block of its own, then the uncut decode's.
TraceEvent Startup(uint64_t offset) {
  TraceEvent event = Block(offset / 10);
  std::get<ExecBlock>(event.body).first_ip -= 8;
  return event;
}

class Collect : public EventSink {
 public:
  void OnEvent(const TraceEvent& event) override { events.push_back(event); }
  std::vector<TraceEvent> events;
};

// prev decoded [0, 7000): cut 5000, trusted up to 6000 (600 events), its last ones untrusted.
DecodedSegment Prev(EventChunkPool& pool) {
  DecodedSegment prev;
  prev.range = TraceSegment{0, 5000, 6000, 7000};
  prev.events = EventChunks(&pool);
  for (size_t i = 0; i < 700; ++i) prev.events.push_back(Block(i));
  prev.trusted = 600;
  prev.at_cut = 500;
  return prev;
}

// What the decoder of `range` delivers: its startup block, then `count` events of the uncut
// decode.
std::vector<TraceEvent> DecodeOf(const TraceSegment& range, size_t count) {
  std::vector<TraceEvent> events{Startup(range.begin)};
  for (size_t i = range.begin / 10; i < range.begin / 10 + count; ++i) events.push_back(Block(i));
  return events;
}

void RequireUncut(const std::vector<TraceEvent>& got, size_t count) {
  REQUIRE(got.size() == count);
  for (size_t i = 0; i < count; ++i) {
    INFO("event " << i);
    REQUIRE(SameEvent(got[i], Block(i)));
  }
}

}  // namespace

TEST_CASE("A streamed last segment joins its predecessor and passes everything on",
          "[streamed_segment]") {
  EventChunkPool pool;
  Collect sink;
  StitchedStream out(sink);
  DecodedSegment prev = Prev(pool);
  const TraceSegment range{5000, 20000, 20000, 20000};
  StreamedSegment streamed(out, pool, range, &prev, 0);
  for (const TraceEvent& event : DecodeOf(range, 1500)) streamed.OnEvent(event);
  streamed.BeforeFinish();
  REQUIRE(streamed.Finish());
  RequireUncut(sink.events, 2000);
  CHECK(out.blocks == 2000);
}

TEST_CASE("A streamed segment holds back its first events until they join", "[streamed_segment]") {
  EventChunkPool pool;
  Collect sink;
  StitchedStream out(sink);
  DecodedSegment prev = Prev(pool);
  const TraceSegment range{5000, 20000, 20000, 20000};
  StreamedSegment streamed(out, pool, range, &prev, 0);
  const auto events = DecodeOf(range, 1500);
  // The join reads up to 256 of its events plus prev's trusted events from 8 before the cut.
  const size_t reads = NextEventsFindJoinReads(prev, 0, range.begin);
  CHECK(reads == 256 + (600 - 492));
  for (size_t i = 0; i + 1 < reads; ++i) streamed.OnEvent(events[i]);
  CHECK(sink.events.empty());
  streamed.OnEvent(events[reads - 1]);
  CHECK(sink.events.size() == 500 + reads - 1);  // prev's up to the join, then its own
}

TEST_CASE("A streamed segment keeps its tail for the next join", "[streamed_segment]") {
  EventChunkPool pool;
  Collect sink;
  StitchedStream out(sink);
  DecodedSegment prev = Prev(pool);
  // Cut at 12000, trusted up to 13000, decoded to 14000.
  const TraceSegment range{5000, 12000, 13000, 14000};
  StreamedSegment streamed(out, pool, range, &prev, 0);
  const auto events = DecodeOf(range, 900);  // blocks 500..1399, offsets up to 13990
  for (const TraceEvent& event : events) streamed.OnEvent(event);
  streamed.BeforeFinish();
  REQUIRE(streamed.Finish());
  // Passed on: everything before the cut (block 1200 is the first at it).
  RequireUncut(sink.events, 1200);
  DecodedSegment tail = streamed.TakeTail();
  REQUIRE(tail.events.size() == 200);
  CHECK(SameEvent(tail.events[0], Block(1200)));
  CHECK(tail.at_cut == 0);
  CHECK(tail.trusted == 100);  // blocks before offset 13000
  CHECK(streamed.tail_base() == 1 + 1200 - 500);  // its startup block, then 500..1199

  // The next segment, collected, joins the tail as it would the whole segment.
  DecodedSegment next;
  next.range = TraceSegment{12000, 20000, 20000, 20000};
  next.events = EventChunks(&pool);
  for (const TraceEvent& event : DecodeOf(next.range, 800)) next.events.push_back(event);
  next.trusted = next.events.size();
  auto join = FindJoin(tail, 0, next);
  REQUIRE(join);
  CHECK(join->prev_end == 0);
  CHECK(join->next_begin == 1);
}

TEST_CASE("A streamed segment decoded again drops what it already saw", "[streamed_segment]") {
  EventChunkPool pool;
  Collect sink;
  StitchedStream out(sink);
  DecodedSegment prev = Prev(pool);
  const TraceSegment range{5000, 20000, 20000, 20000};
  StreamedSegment streamed(out, pool, range, &prev, 0);
  const auto events = DecodeOf(range, 1500);
  for (size_t i = 0; i < 700; ++i) streamed.OnEvent(events[i]);  // the fast engine stops here
  streamed.Redo();
  for (const TraceEvent& event : events) streamed.OnEvent(event);
  streamed.BeforeFinish();
  REQUIRE(streamed.Finish());
  RequireUncut(sink.events, 2000);
}

TEST_CASE("A streamed segment that disagrees with its predecessor passes nothing on",
          "[streamed_segment]") {
  EventChunkPool pool;
  Collect sink;
  StitchedStream out(sink);
  DecodedSegment prev = Prev(pool);
  const TraceSegment range{5000, 20000, 20000, 20000};
  StreamedSegment streamed(out, pool, range, &prev, 0);
  auto events = DecodeOf(range, 1500);
  // Inside the overlap, past every place the join may line up at.
  std::get<ExecBlock>(events[90].body).insns = 3;
  for (const TraceEvent& event : events) streamed.OnEvent(event);
  streamed.BeforeFinish();
  CHECK_FALSE(streamed.Finish());
  CHECK(sink.events.empty());
  CHECK(prev.events.size() == 700);  // still there for a sequential decode
}

TEST_CASE("A short streamed segment joins at its end", "[streamed_segment]") {
  EventChunkPool pool;
  Collect sink;
  StitchedStream out(sink);
  DecodedSegment prev = Prev(pool);
  const TraceSegment range{5000, 20000, 20000, 20000};
  StreamedSegment streamed(out, pool, range, &prev, 0);
  for (const TraceEvent& event : DecodeOf(range, 150)) streamed.OnEvent(event);
  streamed.BeforeFinish();
  REQUIRE(streamed.Finish());
  RequireUncut(sink.events, 650);
}
