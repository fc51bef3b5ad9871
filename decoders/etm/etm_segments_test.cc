#include "decoders/etm/etm_segments.h"

#include <catch2/catch.hpp>

using namespace ptprof;
using namespace ptprof::etm;

namespace {

TraceEvent Block(uint64_t offset, uint64_t ip, uint64_t tsc = kUnknownTime) {
  ExecBlock b;
  b.first_ip = ip;
  b.last_ip = ip + 4;
  b.insns = 2;
  TraceEvent e{EventHeader{}, b};
  e.header.offset = offset;
  e.header.tsc = tsc;
  return e;
}

// Events of an uncut decode: one block per 16 bytes from `from` to `to`.
std::vector<TraceEvent> Uncut(uint64_t from, uint64_t to) {
  std::vector<TraceEvent> out;
  for (uint64_t at = from; at < to; at += 16) out.push_back(Block(at, 0x1000 + at));
  return out;
}

// Every event an element of trace ID `id`.
std::vector<uint8_t> Marks(const std::vector<TraceEvent>& events, uint8_t id) {
  return std::vector<uint8_t>(events.size(), static_cast<uint8_t>(0x80 | id));
}

EventChunks Chunks(const std::vector<TraceEvent>& events) {
  EventChunks out;
  for (const TraceEvent& e : events) out.push_back(e);
  return out;
}

std::optional<EtmJoin> Join(const std::vector<TraceEvent>& prev, size_t prev_from,
                            const std::vector<TraceEvent>& next, const std::vector<uint8_t>& marks,
                            uint64_t next_begin, const TraceIds& must_sync) {
  return FindEtmJoin(Chunks(prev), prev_from, Chunks(next), marks, next_begin, must_sync);
}

TraceIds Ids(std::initializer_list<int> ids) {
  TraceIds out;
  for (int id : ids) out.set(static_cast<size_t>(id));
  return out;
}

}  // namespace

TEST_CASE("PlanEtmSegments cuts at frame multiples and reads on into the next piece", "[etm_segments]") {
  const auto plan = PlanEtmSegments(9000, 4000, 16, 1000);
  REQUIRE(plan.size() == 2);  // 4000 and 5000: a last piece of 1000 goes with the one before
  CHECK(plan[0].begin == 0);
  CHECK(plan[0].cut == 4000);
  CHECK(plan[0].end == 5000);
  CHECK(plan[1].begin == 4000);
  CHECK(plan[1].cut == 9000);
  CHECK(plan[1].end == 9000);
  const auto odd = PlanEtmSegments(100000, 4099, 16, 0);
  for (const EtmSegment& s : odd) CHECK(s.begin % 16 == 0);
  CHECK(PlanEtmSegments(7000, 4000, 16, 1000).empty());  // one piece: not worth cutting
  CHECK(EtmOverlapFor(1 << 20) == (1 << 17));
  CHECK(EtmOverlapFor(4096) == 16 * 1024);
}

TEST_CASE("FindEtmJoin hands over where the next decode has caught up", "[etm_segments]") {
  const std::vector<TraceEvent> prev = Uncut(0, 2000);
  // The next decode starts at 1024, emits a gap and two blocks of its own before it synchronises
  // at 1088, then agrees with the uncut decode.
  std::vector<TraceEvent> next;
  TraceGap gap;
  gap.reason = GapReason::kDesync;
  next.push_back(TraceEvent{EventHeader{}, gap});
  next.back().header.offset = 1024;
  next.push_back(Block(1040, 0x9999));
  next.push_back(Block(1056, 0x9999, 5));
  for (const TraceEvent& e : Uncut(1088, 3000)) next.push_back(e);
  const auto join = Join(prev, 0, next, Marks(next, 0x10), 1024, Ids({0x10}));
  REQUIRE(join);
  CHECK(prev[join->prev_end].header.offset == 1088);
  CHECK(join->next_begin == 3);
}

TEST_CASE("FindEtmJoin refuses pieces that never agree or agree two ways", "[etm_segments]") {
  const std::vector<TraceEvent> prev = Uncut(0, 2000);
  std::vector<TraceEvent> differs = Uncut(1024, 3000);
  for (TraceEvent& e : differs) e.header.tsc = 7;  // a timestamp the uncut decode did not have
  CHECK_FALSE(Join(prev, 0, differs, Marks(differs, 0x10), 1024, {}));
  // The same events twice at the same offsets: two line-ups.
  std::vector<TraceEvent> same(40, Block(1024, 0x1));
  std::vector<TraceEvent> twice(60, Block(1024, 0x1));
  CHECK_FALSE(Join(same, 0, twice, Marks(twice, 0x10), 1024, {}));
  // Too little left of prev to prove anything.
  const auto rest = Uncut(1024, 3000);
  CHECK_FALSE(Join(Uncut(0, 1100), 0, rest, Marks(rest, 0x10), 1024, {}));
}

TEST_CASE("FindEtmJoin waits until the next decode has synchronised every source it must", "[etm_segments]") {
  // Source 0x10 is busy where the pieces overlap; source 0x11 was synchronised before but is
  // quiet there. A next decode that never synchronised 0x11 agrees on everything it sees, yet
  // would lose 0x11's later events: no join. Once it has met 0x11, the join is made.
  const std::vector<TraceEvent> prev = Uncut(0, 2000);
  std::vector<TraceEvent> next = Uncut(1024, 3000);
  std::vector<uint8_t> marks = Marks(next, 0x10);
  CHECK_FALSE(Join(prev, 0, next, marks, 1024, Ids({0x10, 0x11})));
  TraceGap nosync;
  nosync.detail = "no sync: init-decoder";
  next.insert(next.begin(), TraceEvent{EventHeader{}, nosync});
  marks.insert(marks.begin(), 0x80 | 0x11);
  CHECK_FALSE(Join(prev, 0, next, marks, 1024, Ids({0x10, 0x11})));  // "no sync" is not sync
  next.insert(next.begin() + 1, Block(1024, 0x5000));
  marks.insert(marks.begin() + 1, 0x80 | 0x11);
  const auto join = Join(prev, 0, next, marks, 1024, Ids({0x10, 0x11}));
  REQUIRE(join);
  CHECK(join->next_begin == 2);
  CHECK(prev[join->prev_end].header.offset == 1024);
}
