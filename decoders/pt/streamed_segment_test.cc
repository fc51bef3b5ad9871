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

// The last segment: from 5000 to the end of the trace.
constexpr TraceSegment kLast{5000, 20000, 20000, 20000};

// A segment of `range` streamed after Prev, into a stitched stream that collects.
struct Streaming {
  explicit Streaming(const TraceSegment& segment = kLast)
      : range(segment), streamed(out, pool, range, &prev, 0) {}
  // Passes `events` in and finishes: whether the segment joined.
  bool Stream(const std::vector<TraceEvent>& events) {
    for (const TraceEvent& event : events) streamed.OnEvent(event);
    streamed.BeforeFinish();
    return streamed.Finish();
  }
  EventChunkPool pool;
  Collect sink;
  StitchedStream out{sink};
  DecodedSegment prev = Prev(pool);
  TraceSegment range;
  StreamedSegment streamed;
};

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
  Streaming s;
  REQUIRE(s.Stream(DecodeOf(s.range, 1500)));
  RequireUncut(s.sink.events, 2000);
  CHECK(s.out.blocks == 2000);
}

TEST_CASE("A streamed segment holds back its first events until they join", "[streamed_segment]") {
  Streaming s;
  const auto events = DecodeOf(s.range, 1500);
  // The join reads up to 256 of its events plus prev's trusted events from 8 before the cut.
  const size_t reads = NextEventsFindJoinReads(s.prev, 0, s.range.begin);
  CHECK(reads == 256 + (600 - 492));
  for (size_t i = 0; i + 1 < reads; ++i) s.streamed.OnEvent(events[i]);
  CHECK(s.sink.events.empty());
  s.streamed.OnEvent(events[reads - 1]);
  CHECK(s.sink.events.size() == 500 + reads - 1);  // prev's up to the join, then its own
}

TEST_CASE("A streamed segment keeps its tail for the next join", "[streamed_segment]") {
  // Cut at 12000, trusted up to 13000, decoded to 14000.
  Streaming s(TraceSegment{5000, 12000, 13000, 14000});
  // Blocks 500..1399, offsets up to 13990.
  REQUIRE(s.Stream(DecodeOf(s.range, 900)));
  // Passed on: everything before the cut (block 1200 is the first at it).
  RequireUncut(s.sink.events, 1200);
  DecodedSegment tail = s.streamed.TakeTail();
  REQUIRE(tail.events.size() == 200);
  CHECK(SameEvent(tail.events[0], Block(1200)));
  CHECK(tail.at_cut == 0);
  CHECK(tail.trusted == 100);  // blocks before offset 13000
  CHECK(s.streamed.tail_base() == 1 + 1200 - 500);  // its startup block, then 500..1199

  // The next segment, collected, joins the tail as it would the whole segment.
  DecodedSegment next;
  next.range = TraceSegment{12000, 20000, 20000, 20000};
  next.events = EventChunks(&s.pool);
  for (const TraceEvent& event : DecodeOf(next.range, 800)) next.events.push_back(event);
  next.trusted = next.events.size();
  auto join = FindJoin(tail, 0, next);
  REQUIRE(join);
  CHECK(join->prev_end == 0);
  CHECK(join->next_begin == 1);
}

TEST_CASE("A streamed segment decoded again drops what it already saw", "[streamed_segment]") {
  Streaming s;
  const auto events = DecodeOf(s.range, 1500);
  for (size_t i = 0; i < 700; ++i) s.streamed.OnEvent(events[i]);  // the fast engine stops here
  s.streamed.Redo();
  REQUIRE(s.Stream(events));
  RequireUncut(s.sink.events, 2000);
}

TEST_CASE("A streamed segment that disagrees with its predecessor passes nothing on",
          "[streamed_segment]") {
  Streaming s;
  auto events = DecodeOf(s.range, 1500);
  // Inside the overlap, past every place the join may line up at.
  std::get<ExecBlock>(events[90].body).insns = 3;
  CHECK_FALSE(s.Stream(events));
  CHECK(s.sink.events.empty());
  CHECK(s.prev.events.size() == 700);  // still there for a sequential decode
}

TEST_CASE("A short streamed segment joins at its end", "[streamed_segment]") {
  Streaming s;
  REQUIRE(s.Stream(DecodeOf(s.range, 150)));
  RequireUncut(s.sink.events, 650);
}
