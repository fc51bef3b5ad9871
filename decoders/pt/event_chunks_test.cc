#include "decoders/pt/event_chunks.h"

#include <catch2/catch.hpp>

using namespace ptprof;
using namespace ptprof::pt;

namespace {

TraceEvent BlockAt(uint64_t offset) {
  ExecBlock block;
  block.first_ip = 0x1000 + offset;
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
  events.back().header.offset = 7;
  CHECK(events[count - 1].header.offset == 7);
}

TEST_CASE("EventChunks gives its chunks back to the pool, which reuses them", "[event_chunks]") {
  EventChunkPool pool(2);
  {
    EventChunks events(&pool);
    for (size_t i = 0; i < 3 * EventChunkPool::kChunkEvents; ++i) events.push_back(BlockAt(i));
  }
  CHECK(pool.spare() == 2);  // three chunks, the pool keeps two
  EventChunks again(&pool);
  again.push_back(BlockAt(1));
  CHECK(pool.spare() == 1);
  CHECK(again[0].header.offset == 1);
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
