#include "src/model/piece_arena.h"

#include <catch2/catch.hpp>

#include <cstdint>
#include <set>
#include <vector>

namespace ptprof {
namespace {

struct Record {
  uint64_t a;
  uint32_t b;
};

TEST_CASE("pieces are distinct, aligned, kept, and visited in the order they were given") {
  PieceArena<Record> arena;
  // Past the heap's share into the slabs: 4096 on the heap, then two slabs' worth.
  const size_t count = PieceArenaChunks::kHeapPieces + 2 * (HugeSlabs::kSlabBytes / sizeof(Record)) + 3;
  std::vector<Record*> given;
  for (size_t i = 0; i < count; ++i) {
    Record* r = arena.Allocate();
    REQUIRE(reinterpret_cast<uintptr_t>(r) % alignof(Record) == 0);
    r->a = i;
    r->b = static_cast<uint32_t>(i * 3);
    given.push_back(r);
  }
  CHECK(arena.size() == count);
  CHECK(std::set<Record*>(given.begin(), given.end()).size() == count);
  size_t k = 0, right = 0;
  arena.ForEach([&](Record* r) {
    right += k < given.size() && r == given[k] && r->a == k && r->b == k * 3;
    ++k;
  });
  CHECK(k == count);
  CHECK(right == count);
}

TEST_CASE("an over-aligned piece is aligned on the heap and in the slabs") {
  struct alignas(256) Wide {
    uint8_t bytes[300];
  };
  PieceArena<Wide> arena;
  size_t misaligned = 0;
  for (size_t i = 0; i < PieceArenaChunks::kHeapPieces + 100; ++i)
    misaligned += reinterpret_cast<uintptr_t>(arena.Allocate()) % 256 != 0;
  CHECK(misaligned == 0);
  PieceArena<Wide> unused;  // nothing made, nothing to free
  CHECK(unused.size() == 0);
}

}  // namespace
}  // namespace ptprof
