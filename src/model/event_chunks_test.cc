#include "src/model/event_chunks.h"

#include <catch2/catch.hpp>

#include "src/model/event_equality.h"
#include "src/model/run_ref.h"

using namespace ptprof;

namespace {

TraceEvent BlockAt(uint64_t offset) {
  ExecBlock block;
  block.first_ip = 0x1000 + offset;
  block.last_ip = block.first_ip;
  block.insns = 1;
  TraceEvent event{EventHeader{}, block};
  event.header.offset = offset;
  return event;
}

}  // namespace

TEST_CASE("EventChunks keeps events in order across chunk borders", "[event_chunks]") {
  EventChunkPool pool;
  EventChunks events(&pool);
  const size_t count = 3 * EventChunkPool::kChunkEvents + 5;
  for (size_t i = 0; i < count; ++i) events.push_back(BlockAt(i));
  REQUIRE(events.size() == count);
  for (size_t i = 0; i < count; i += 997) CHECK(events[i].header.offset == i);
  CHECK(events[count - 1].header.offset == count - 1);
  CHECK(events.whole() == 0);  // plain blocks are all packed
}

TEST_CASE("EventChunks gives back every event as it was pushed, packed or kept whole",
          "[event_chunks]") {
  std::vector<TraceEvent> pushed;
  ExecBlock block;
  block.first_ip = 0xffffffff81000000;
  block.last_ip = 0xffffffff81000040;
  block.insns = 17;
  block.last_insn_size = 5;
  block.end = BlockEnd::kCondTaken;
  block.mode = ExecMode::k64Bit;
  block.speculative = true;
  TraceEvent plain{EventHeader{kUnknownTime, 0x1234, 0x40, 3, 100, 101}, block};
  pushed.push_back(plain);
  TraceEvent other_task = plain;  // a second (cpu, pid, tid): still packed
  other_task.header.pid = 200;
  other_task.header.tid = 201;
  std::get<ExecBlock>(other_task.body).truncated = true;
  pushed.push_back(other_task);
  TraceEvent timed = plain;  // stamped with ns already: kept whole
  timed.header.time_ns = 5000;
  pushed.push_back(timed);
  TraceEvent ended = plain;  // an end time: kept whole
  std::get<ExecBlock>(ended.body).end_time_ns = 7000;
  pushed.push_back(ended);
  TraceEvent wide = plain;  // last_ip more than 4 GiB after first_ip: kept whole
  std::get<ExecBlock>(wide.body).last_ip = block.first_ip + (uint64_t{1} << 33);
  pushed.push_back(wide);
  TraceGap gap;
  gap.reason = GapReason::kOverflow;
  gap.detail = "trace overflow";
  pushed.push_back(TraceEvent{EventHeader{kUnknownTime, 9, 0x80, 3, 100, 101}, gap});
  pushed.push_back(plain);

  EventChunkPool pool;
  EventChunks events(&pool);
  for (const TraceEvent& e : pushed) events.push_back(e);
  REQUIRE(events.size() == pushed.size());
  CHECK(events.whole() == 4);
  for (size_t i = 0; i < pushed.size(); ++i) {
    INFO("event " << i);
    const TraceEvent& got = events[i];
    CHECK(got.header.time_ns == pushed[i].header.time_ns);
    CHECK(got.header.tsc == pushed[i].header.tsc);
    CHECK(got.header.offset == pushed[i].header.offset);
    CHECK(got.header.cpu == pushed[i].header.cpu);
    CHECK(got.header.pid == pushed[i].header.pid);
    CHECK(got.header.tid == pushed[i].header.tid);
    REQUIRE(got.body.index() == pushed[i].body.index());
    if (const auto* b = std::get_if<ExecBlock>(&pushed[i].body)) {
      const ExecBlock& g = std::get<ExecBlock>(got.body);
      CHECK(g.first_ip == b->first_ip);
      CHECK(g.last_ip == b->last_ip);
      CHECK(g.insns == b->insns);
      CHECK(g.last_insn_size == b->last_insn_size);
      CHECK(g.end == b->end);
      CHECK(g.mode == b->mode);
      CHECK(g.speculative == b->speculative);
      CHECK(g.truncated == b->truncated);
      CHECK(g.end_time_ns == b->end_time_ns);
    } else {
      CHECK(std::get<TraceGap>(got.body).detail == "trace overflow");
    }
  }
  events.Clear();
  CHECK(events.whole() == 0);
}

TEST_CASE("EventChunks gives its chunks back to the pool, which reuses them", "[event_chunks]") {
  EventChunkPool pool(2);
  {
    EventChunks events(&pool);
    for (size_t i = 0; i < 3 * EventChunkPool::kChunkEvents; ++i) events.push_back(BlockAt(i));
  }
  // Chunks of packed records live in the pool's slabs: all three are kept (`keep` bounds only
  // the chunks of whole events), carved from one 2 MiB slab.
  CHECK(pool.spare() == 3);
  CHECK(pool.slabs() == 1);
  EventChunks again(&pool);
  for (size_t i = 0; i < 2 * EventChunkPool::kChunkEvents; ++i) again.push_back(BlockAt(i + 7));
  CHECK(pool.spare() == 1);
  CHECK(pool.slabs() == 1);  // nothing new carved
  CHECK(again[0].header.offset == 7);
  CHECK(again[EventChunkPool::kChunkEvents].header.offset == EventChunkPool::kChunkEvents + 7);
}

TEST_CASE("EventChunks without a pool makes its own, which moves with its events",
          "[event_chunks]") {
  EventChunks events;
  for (size_t i = 0; i < EventChunkPool::kChunkEvents + 5; ++i) events.push_back(BlockAt(i));
  EventChunks moved(std::move(events));
  CHECK(events.size() == 0);
  // The emptied container makes a pool of its own again when it is used.
  events.push_back(BlockAt(99));
  CHECK(events[0].header.offset == 99);
  REQUIRE(moved.size() == EventChunkPool::kChunkEvents + 5);
  CHECK(moved[EventChunkPool::kChunkEvents + 4].header.offset == EventChunkPool::kChunkEvents + 4);
  EventChunks assigned;
  assigned.push_back(BlockAt(1));
  assigned = std::move(moved);
  CHECK(assigned.size() == EventChunkPool::kChunkEvents + 5);
  CHECK(assigned[3].header.offset == 3);
  assigned.Clear();
  assigned.push_back(BlockAt(5));  // a chunk back from its own pool
  CHECK(assigned[0].header.offset == 5);
}

TEST_CASE("EventChunks keeps instructions whole, in chunks the pool hands on", "[event_chunks]") {
  EventChunkPool pool;
  const size_t count = 2 * EventChunkPool::kWholeEvents + 3;
  auto instruction = [](size_t i) {
    Instruction insn;
    insn.ip = 0x400000 + i;
    insn.size = 1;
    insn.bytes[0] = static_cast<uint8_t>(i);
    TraceEvent event{EventHeader{}, insn};
    event.header.offset = i;
    event.header.tsc = 10 * i;
    return event;
  };
  for (int round = 0; round < 2; ++round) {
    INFO("round " << round);  // the second round takes the first one's chunks from the pool
    EventChunks events(&pool);
    for (size_t i = 0; i < count; ++i) {
      events.push_back(instruction(i));
      if (i % 500 == 0) events.push_back(BlockAt(i));  // packed ones between them
    }
    CHECK(events.whole() == count);
    size_t next = 0;
    for (size_t i = 0; i < events.size(); ++i) {
      const TraceEvent& event = events[i];
      if (!std::holds_alternative<Instruction>(event.body)) continue;
      CHECK(SameEvent(event, instruction(next)));
      CHECK(events.OffsetAt(i) == next);
      ++next;
    }
    CHECK(next == count);
    if (round == 1) CHECK(pool.spare() == 0);  // all three whole chunks reused, none made
  }
  CHECK(pool.spare() == 4);  // one chunk of packed records, three of whole events
}

TEST_CASE("EventChunks moves without copying events", "[event_chunks]") {
  EventChunkPool pool;
  EventChunks a(&pool);
  a.push_back(BlockAt(3));
  EventChunks b = std::move(a);
  CHECK(a.size() == 0);
  REQUIRE(b.size() == 1);
  CHECK(b[0].header.offset == 3);
  a = std::move(b);
  CHECK(a.size() == 1);
  a.Clear();
  CHECK(a.empty());
  CHECK(pool.spare() == 1);
}

namespace {

class Collect : public EventSink {
 public:
  void OnEvent(const TraceEvent& event) override { events.push_back(event); }
  void OnBlocks(const BlockBatch& batch) override {
    ++batches;
    EventSink::OnBlocks(batch);
  }
  std::vector<TraceEvent> events;
  size_t batches = 0;
};

std::vector<TraceEvent> Mixed() {
  std::vector<TraceEvent> events;
  for (size_t i = 0; i < 3 * EventChunkPool::kChunkEvents; ++i) {
    TraceEvent event = BlockAt(i);
    if (i % 1000 == 999) event.header.tid = 7;  // another task now and then
    events.push_back(event);
    if (i % 777 == 0) {
      TraceGap gap;
      gap.reason = GapReason::kDesync;
      events.push_back(TraceEvent{EventHeader{}, gap});
    }
  }
  return events;
}

}  // namespace

TEST_CASE("EventChunks appends batches and passes ranges back out as they went in",
          "[event_chunks]") {
  const std::vector<TraceEvent> events = Mixed();
  EventChunkPool pool;
  EventChunks pushed(&pool), appended(&pool);
  for (const TraceEvent& event : events) pushed.push_back(event);
  // The same events, blocks arriving in batches (runs of one task), the others one by one.
  std::vector<PackedEvent> run;
  int32_t tid = kUnknownId;
  auto flush = [&] {
    if (run.empty()) return;
    BlockBatch batch;
    batch.blocks = run;
    batch.tid = tid;
    appended.Append(batch);
    run.clear();
  };
  for (const TraceEvent& event : events) {
    if (!Packable(event) || (!run.empty() && event.header.tid != tid)) flush();
    if (!Packable(event)) {
      appended.push_back(event);
      continue;
    }
    tid = event.header.tid;
    run.emplace_back();
    PackBlock(event, run.back());
  }
  flush();
  REQUIRE(appended.size() == events.size());
  REQUIRE(appended.whole() == pushed.whole());
  for (size_t i = 0; i < events.size(); i += 101) {
    INFO("event " << i);
    CHECK(SameEvent(appended[i], events[i]));
    CHECK(appended.SameAt(i, pushed, i));
    CHECK(appended.OffsetAt(i) == events[i].header.offset);
  }
  CHECK_FALSE(appended.SameAt(5, pushed, 6));
  // Passed on in one piece and from the middle: the same events, blocks in batches.
  for (auto [from, to] : {std::pair<size_t, size_t>{0, events.size()}, {4000, 9000}}) {
    Collect out;
    appended.PassOn(from, to, out);
    REQUIRE(out.events.size() == to - from);
    for (size_t i = from; i < to; i += 97) CHECK(SameEvent(out.events[i - from], events[i]));
    CHECK(out.batches > 0);
    CHECK(out.batches < (to - from) / 100);
  }
}

TEST_CASE("EventChunks keeps run references as one record each and passes on their blocks",
          "[event_chunks]") {
  // A run's blocks as the fast engine keeps them (no tsc or offset of their own), referred to
  // between plain blocks, a whole event and another task's blocks.
  std::vector<RunBlock> run(7);
  for (size_t i = 0; i < run.size(); ++i) {
    run[i].first_ip = 0x4000 + 16 * i;
    run[i].span = 4;
    run[i].insns = 2 + static_cast<uint32_t>(i);
    run[i].last_insn_size = 2;
    run[i].end = static_cast<uint8_t>(BlockEnd::kCondTaken);
    run[i].flags = i == 3 ? kPackedSpeculative : 0;
  }
  std::vector<TraceEvent> expected;
  EventChunkPool pool;
  EventChunks chunks(&pool);
  auto append = [&](std::vector<PackedEvent> records, int32_t tid) {
    BlockBatch batch;
    batch.blocks = records;
    batch.tid = tid;
    chunks.Append(batch);
  };
  auto plain = [&](uint64_t offset, int32_t tid) {
    TraceEvent event = BlockAt(offset);
    event.header.tid = tid;
    expected.push_back(event);
    PackedEvent packed;
    PackBlock(event, packed);
    return packed;
  };
  auto ref = [&](uint32_t n, uint64_t first_offset, uint64_t offset, int32_t tid) {
    uint64_t insns = 0;
    for (uint32_t i = 0; i < n; ++i) {
      TraceEvent event{EventHeader{}, ExecBlock{}};
      PackedEvent packed;
      StampRunBlock(run[i], 0, 0, packed);
      UnpackBlock(packed, kUnknownId, kUnknownId, tid, event);
      event.header.offset = i == 0 ? first_offset : offset;
      std::get<ExecBlock>(event.body).first_ip = run[i].first_ip;
      event.header.time_ns = kUnknownTime;
      expected.push_back(event);
      insns += run[i].insns;
    }
    PackedEvent record;
    REQUIRE(MakeRunRef(run.data(), n, insns, 77, first_offset, offset, record));
    return record;
  };
  append({plain(10, 1), ref(5, 11, 12, 1), plain(13, 1)}, 1);
  TraceGap gap;
  TraceEvent whole{EventHeader{}, gap};
  whole.header.offset = 14;
  expected.push_back(whole);
  chunks.push_back(whole);
  append({ref(7, 15, 20, 2), ref(1, 21, 21, 2)}, 2);
  append({plain(22, 1)}, 1);
  // The tsc the references stamp.
  for (TraceEvent& event : expected) {
    if (auto* block = std::get_if<ExecBlock>(&event.body); block && event.header.offset >= 11 &&
                                                            event.header.offset <= 21 &&
                                                            event.header.offset != 13)
      event.header.tsc = 77;
  }
  CHECK(chunks.size() == 7);
  CHECK(chunks.refs_begin() == 1);
  CHECK(chunks.refs_end() == 6);
  CHECK_FALSE(chunks.SameAt(1, chunks, 1));  // a reference equals nothing
  CHECK(chunks.SameAt(0, chunks, 0));
  CHECK(chunks.OffsetAt(1) == 12);
  Collect out;
  chunks.PassOn(0, chunks.size(), out);
  REQUIRE(out.events.size() == expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    INFO("event " << i);
    CHECK(SameEvent(out.events[i], expected[i]));
  }
  chunks.Clear();
  CHECK(chunks.refs_begin() == chunks.refs_end());
}
