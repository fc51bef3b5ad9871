#include "decoders/etm/etm_piece_split.h"

#include <catch2/catch.hpp>

#include "decoders/etm/event_passer.h"

using namespace ptprof;
using namespace ptprof::etm;

namespace {

TraceEvent Block(uint64_t offset, uint32_t insns = 3, uint64_t tsc = kUnknownTime) {
  ExecBlock b;
  b.first_ip = 0x1000 + offset;
  b.last_ip = b.first_ip + 4;
  b.insns = insns;
  TraceEvent e{EventHeader{}, b};
  e.header.offset = offset;
  e.header.tsc = tsc;
  return e;
}

TraceEvent Timestamp(uint64_t offset, uint64_t value) {
  Marker m;
  m.kind = Marker::Kind::kTimestamp;
  m.value = value;
  TraceEvent e{EventHeader{}, m};
  e.header.offset = offset;
  e.header.tsc = value;
  return e;
}

TraceEvent NoSync(uint64_t offset) {
  TraceGap g;
  g.reason = GapReason::kDesync;
  g.detail = "no sync: bad packet";
  TraceEvent e{EventHeader{}, g};
  e.header.offset = offset;
  return e;
}

TraceEvent EndOfTrace() {
  Marker m;
  m.kind = Marker::Kind::kEndOfTrace;
  return TraceEvent{EventHeader{}, m};  // offset 0, as the flush at the buffer's end makes it
}

struct Kept : EventSink {
  std::vector<uint64_t> offsets;
  void OnEvent(const TraceEvent& e) override { offsets.push_back(e.header.offset); }
};

// Feeds `events` to `split` as a decoder does: each one's mark first.
void Feed(PieceSplit& split, const std::vector<TraceEvent>& events, uint8_t mark = 0x85) {
  for (const TraceEvent& e : events) {
    split.decoder_marks().push_back(mark);
    split.OnEvent(e);
  }
}

std::vector<uint64_t> Offsets(const EventChunks& events) {
  std::vector<uint64_t> out;
  for (size_t k = 0; k < events.size(); ++k) out.push_back(events.OffsetAt(k));
  return out;
}

}  // namespace

TEST_CASE("the first piece has no head: its part takes everything before the cut") {
  EventChunkPool pool;
  Kept part;
  PieceSplit split(part, pool, 0, 100);
  Feed(split, {Block(0), Timestamp(10, 77), Block(20, 5), Block(99), Block(100), Block(96)});
  CHECK(part.offsets == std::vector<uint64_t>{0, 10, 20, 99});
  CHECK_FALSE(split.whole());
  CHECK(split.head().empty());
  // From the first event at or past the cut on, whatever its offset.
  CHECK(Offsets(split.tail()) == std::vector<uint64_t>{100, 96});
  CHECK(split.tail_marks() == std::vector<uint8_t>{0x85, 0x85});
  CHECK(split.tail_base() == 4);
  CHECK(split.min_offset_past_head() == 0);
  const PartTally& tally = split.tally();
  CHECK(tally.counts.elements == 4);
  CHECK(tally.counts.ranges == 3);
  CHECK(tally.counts.instructions == 11);
  CHECK(tally.synced.test(5));
  // The block before the timestamp had no TSC; the two after it carry none either here.
  CHECK(tally.unstamped.test(5));
  REQUIRE(tally.last_timestamp[5]);
  CHECK(*tally.last_timestamp[5] == 77);
  CHECK_FALSE(split.lost_sync());
}

TEST_CASE("a head runs a margin of events past head_until, then the part takes over") {
  EventChunkPool pool;
  Kept part;
  PieceSplit split(part, pool, 50, 100000);
  std::vector<TraceEvent> events;
  for (uint64_t at = 0; at < 50 + PieceSplit::kMargin + 10; ++at) events.push_back(Block(at));
  Feed(split, events);
  CHECK(split.head().size() == 50 + PieceSplit::kMargin);
  CHECK(split.head_marks().size() == split.head().size());
  CHECK(part.offsets.size() == 10);
  CHECK(part.offsets.front() == 50 + PieceSplit::kMargin);
  CHECK(split.min_offset_past_head() == 50 + PieceSplit::kMargin);
  CHECK_FALSE(split.whole());
  CHECK(split.tail().empty());
  CHECK(split.tail_base() == events.size());  // no tail: it would begin after the last event
  // The end-of-trace markers of the last piece have no offset: they line nothing up.
  Feed(split, {EndOfTrace(), EndOfTrace()});
  CHECK(part.offsets.size() == 12);
  CHECK(split.min_offset_past_head() == 50 + PieceSplit::kMargin);
}

TEST_CASE("a head that reaches the cut, or the decode's end, keeps every event") {
  EventChunkPool pool;
  Kept part;
  PieceSplit reached(part, pool, 50, 60);
  std::vector<TraceEvent> events;
  for (uint64_t at = 40; at < 300; ++at) events.push_back(Block(at));
  Feed(reached, events);
  CHECK(reached.whole());
  CHECK(reached.head().size() == events.size());
  CHECK(part.offsets.empty());

  PieceSplit ended(part, pool, 500, 1000);
  Feed(ended, events);
  CHECK(ended.whole());
  CHECK(ended.head().size() == events.size());
  CHECK(part.offsets.empty());
}

TEST_CASE("a source that loses synchronisation is noted wherever its event goes") {
  EventChunkPool pool;
  Kept part;
  PieceSplit split(part, pool, 0, 100);
  Feed(split, {Block(0), NoSync(30), Block(40), NoSync(50)});
  REQUIRE(split.lost_sync());
  CHECK(*split.lost_sync() == 30);
  CHECK_FALSE(split.tally().synced.none());
}

TEST_CASE("the passer stamps as the piece could not, counts, and takes a part's tally") {
  struct Out : EventSink {
    std::vector<TraceEvent> events;
    void OnEvent(const TraceEvent& e) override { events.push_back(e); }
  } out;
  EtmDecodeStats total;
  EventPasser pass(out, total);
  pass.Pass(Block(0), 0x83);  // no timestamp of ID 3 yet: passed as it is
  pass.Pass(Timestamp(4, 500), 0x83);
  pass.Pass(Block(8), 0x83);  // stamped
  pass.Pass(Block(12), 0x84);  // ID 4 has none
  REQUIRE(out.events.size() == 4);
  CHECK(out.events[0].header.tsc == kUnknownTime);
  CHECK(out.events[2].header.tsc == 500);
  CHECK(out.events[3].header.tsc == kUnknownTime);
  CHECK(total.elements == 4);
  CHECK(total.ranges == 3);
  CHECK(total.instructions == 9);

  TraceIds ids;
  ids.set(4);
  CHECK(pass.StampsOneOf(ids) == -1);
  ids.set(3);
  CHECK(pass.StampsOneOf(ids) == 3);

  PartTally tally;
  tally.Add(Timestamp(20, 900), 0x84);
  tally.Add(Block(24, 7, 900), 0x84);
  pass.Absorb(tally);
  CHECK(total.elements == 6);
  CHECK(total.instructions == 16);
  CHECK(pass.synced().test(4));
  pass.Pass(Block(30), 0x84);  // stamped with the part's timestamp
  CHECK(out.events.back().header.tsc == 900);

  // Following a decode: only its events [skip, until) are passed on.
  std::vector<uint8_t> marks;
  pass.Follow(marks, 1, 3);
  const size_t before = out.events.size();
  for (uint64_t at = 40; at < 45; ++at) {
    marks.push_back(0x83);
    pass.OnEvent(Block(at));
  }
  REQUIRE(out.events.size() == before + 2);
  CHECK(out.events[before].header.offset == 41);
  CHECK(out.events[before + 1].header.offset == 42);
}
