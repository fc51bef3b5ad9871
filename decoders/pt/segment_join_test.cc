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
void AppendRef(DecodedSegment& segment, const std::vector<RunBlock>& blocks, uint64_t offset) {
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
  const std::vector<RunBlock> blocks(3);
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

namespace {

TraceEvent Insn(uint64_t offset, uint64_t ip, uint64_t tsc) {
  Instruction insn;
  insn.ip = ip;
  insn.size = 1;
  TraceEvent event{EventHeader{}, insn};
  event.header.offset = offset;
  event.header.tsc = tsc;
  return event;
}

// A stream of `count` instructions at one packet offset each 8, from `ip` on, at time `tsc`.
void Insns(std::vector<TraceEvent>& out, size_t count, uint64_t offset, uint64_t ip, uint64_t tsc) {
  for (size_t i = 0; i < count; ++i) out.push_back(Insn(offset + i / 8, ip + i, tsc));
}

}  // namespace

TEST_CASE("FindJoin looks as many blocks far in a stream of instructions as in one of blocks",
          "[segment_join]") {
  // prev: 100 instructions before the cut at 1000, then 200 whose time is still the one before
  // the PSB there (instructions inside a block carry the time before them), then 300 that agree
  // with next; next: its own first 200 (the PSB's time), then the same 300.
  std::vector<TraceEvent> before, mine, agreed;
  Insns(before, 100, 900, 0x1000, 5);
  Insns(mine, 200, 1000, 0x2000, 5);
  Insns(agreed, 300, 1100, 0x3000, 9);
  std::vector<TraceEvent> prev_events = before;
  prev_events.insert(prev_events.end(), mine.begin(), mine.end());
  prev_events.insert(prev_events.end(), agreed.begin(), agreed.end());
  std::vector<TraceEvent> next_events;
  for (TraceEvent e : mine) {
    e.header.tsc = 9;
    next_events.push_back(e);
  }
  next_events.insert(next_events.end(), agreed.begin(), agreed.end());
  auto prev = Segment(0, prev_events, prev_events.size());
  auto next = Segment(1000, next_events, next_events.size());
  // The handover lies 200 events past the cut: beyond a stream of blocks' 64.
  auto join = FindJoin(prev, 0, next);
  REQUIRE(join);
  CHECK(join->prev_end == 300);
  CHECK(join->next_begin == 200);
  // (Its candidates begin at prev's first event: 100 lie before the cut, fewer than 128.)
  CHECK(NextEventsFindJoinReads(prev, 0, 1000) == kInsnJoinWindows.next_startup + prev.trusted);
  // The same distance in blocks is too far.
  std::vector<TraceEvent> prev_blocks, next_blocks;
  for (size_t i = 0; i < 100; ++i) prev_blocks.push_back(Block(900 + i / 8, 0x1000 + 8 * i));
  for (size_t i = 0; i < 200; ++i) {
    prev_blocks.push_back(Block(1000 + i / 8, 0x2000 + 8 * i));
    next_blocks.push_back(Block(1000 + i / 8, 0x2000 + 8 * i + 4));
  }
  for (size_t i = 0; i < 300; ++i) {
    prev_blocks.push_back(Block(1100 + i / 8, 0x3000 + 8 * i));
    next_blocks.push_back(Block(1100 + i / 8, 0x3000 + 8 * i));
  }
  CHECK_FALSE(FindJoin(Segment(0, prev_blocks, prev_blocks.size()), 0,
                       Segment(1000, next_blocks, next_blocks.size())));
}
