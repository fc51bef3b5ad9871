#include "decoders/pt/segment_join.h"

#include <catch2/catch.hpp>

using namespace ptprof;
using namespace ptprof::pt;

namespace {

TraceEvent Block(uint64_t offset, uint64_t ip) {
  ExecBlock block;
  block.first_ip = ip;
  block.last_ip = ip + 4;
  block.insns = 2;
  TraceEvent event{EventHeader{}, block};
  event.header.offset = offset;
  return event;
}

DecodedSegment Segment(uint64_t begin, std::vector<TraceEvent> events, size_t trusted) {
  DecodedSegment segment;
  segment.range.begin = begin;
  for (const TraceEvent& event : events) segment.events.push_back(event);
  segment.trusted = trusted;
  return segment;
}

}  // namespace

TEST_CASE("FindJoin hands over where the overlap agrees", "[segment_join]") {
  // prev: blocks at 10, 20, then (past the cut at 30) 30, 40; its last event is untrusted.
  auto prev = Segment(0, {Block(10, 0x100), Block(20, 0x110), Block(30, 0x120), Block(40, 0x130),
                          Block(50, 0x999)}, 4);
  // next starts at the PSB at 30 with a block of its own, then agrees.
  auto next = Segment(30, {Block(30, 0x118), Block(30, 0x120), Block(40, 0x130), Block(50, 0x140)}, 4);
  auto join = FindJoin(prev, 0, next);
  REQUIRE(join);
  CHECK(join->prev_end == 2);
  CHECK(join->next_begin == 1);
}

TEST_CASE("FindJoin refuses an overlap that disagrees", "[segment_join]") {
  auto prev = Segment(0, {Block(10, 0x100), Block(30, 0x120), Block(40, 0x130)}, 3);
  auto next = Segment(30, {Block(30, 0x120), Block(40, 0x131)}, 2);
  CHECK_FALSE(FindJoin(prev, 0, next));
}

TEST_CASE("FindJoin refuses when prev trusts nothing past the cut", "[segment_join]") {
  auto prev = Segment(0, {Block(10, 0x100), Block(30, 0x120)}, 1);
  auto next = Segment(30, {Block(30, 0x120)}, 1);
  CHECK_FALSE(FindJoin(prev, 0, next));
}

TEST_CASE("FindJoin refuses two ways to line the pieces up", "[segment_join]") {
  // The same block over and over in one packet: any shift would agree.
  auto prev = Segment(0, {Block(10, 0x100), Block(30, 0x120), Block(30, 0x120)}, 3);
  auto next = Segment(30, {Block(30, 0x120), Block(30, 0x120), Block(30, 0x120), Block(30, 0x120)}, 4);
  CHECK_FALSE(FindJoin(prev, 0, next));
}
