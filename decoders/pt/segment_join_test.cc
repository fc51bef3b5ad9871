#include "decoders/pt/segment_join.h"

#include <catch2/catch.hpp>

#include "src/model/run_ref.h"

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

namespace {

// `segment` with a run reference (to `blocks`) appended: one record, standing for them.
void AppendRef(DecodedSegment& segment, const std::vector<PackedEvent>& blocks, uint64_t offset) {
  std::vector<PackedEvent> record(1);
  REQUIRE(MakeRunRef(blocks.data(), static_cast<uint32_t>(blocks.size()), 2 * blocks.size(), 0,
                     offset, offset, record[0]));
  BlockBatch batch;
  batch.blocks = record;
  segment.events.Append(batch);
}

}  // namespace

TEST_CASE("FindJoin compares no run reference",
          "[segment_join]") {
  const std::vector<PackedEvent> blocks(3);
  // Well before the candidates: the join is as without it.
  auto prev = Segment(0, {Block(5, 0x90)}, 0);
  AppendRef(prev, blocks, 6);
  for (const TraceEvent& event : {Block(10, 0x100), Block(11, 0x101), Block(12, 0x102),
                                  Block(13, 0x103), Block(14, 0x104), Block(15, 0x105),
                                  Block(16, 0x106), Block(17, 0x107), Block(18, 0x108),
                                  Block(20, 0x110), Block(30, 0x120), Block(40, 0x130)})
    prev.events.push_back(event);
  prev.trusted = prev.events.size();
  auto next = Segment(30, {Block(30, 0x118), Block(30, 0x120), Block(40, 0x130), Block(50, 0x140)}, 4);
  auto join = FindJoin(prev, 0, next);
  REQUIRE(join);
  CHECK(join->prev_end == prev.events.size() - 2);
  CHECK(join->next_begin == 1);

  // In prev's tail: the join comes after it (where the events agree as well).
  auto prev_ref = Segment(0, {Block(10, 0x100), Block(20, 0x110), Block(30, 0x120)}, 0);
  AppendRef(prev_ref, blocks, 35);
  prev_ref.events.push_back(Block(40, 0x130));
  prev_ref.trusted = prev_ref.events.size();
  join = FindJoin(prev_ref, 0, next);
  REQUIRE(join);
  CHECK(join->prev_end == 4);
  CHECK(join->next_begin == 2);
  // In next's compared head: no join.
  auto next_ref = Segment(30, {Block(30, 0x118), Block(30, 0x120), Block(40, 0x130)}, 0);
  AppendRef(next_ref, blocks, 45);
  next_ref.trusted = next_ref.events.size();
  // (without the reference, these two join: prev's trusted tail 30, 40 is next's 1, 2)
  auto prev_plain = Segment(0, {Block(10, 0x100), Block(20, 0x110), Block(30, 0x120),
                                Block(40, 0x130), Block(50, 0x140)}, 4);
  CHECK(FindJoin(prev_plain, 0, next));
  CHECK_FALSE(FindJoin(prev_plain, 0, next_ref));
}
