#include "src/model/zeroed_array.h"

#include <catch2/catch.hpp>

#include <cstdint>

#include "src/model/huge_slabs.h"

namespace ptprof {
namespace {

struct Slot {
  uint64_t key = 0;
  const Slot* next = nullptr;
  uint8_t mode = 0;
};

TEST_CASE("a zeroed array starts empty in every slot, small or large") {
  for (size_t size : {size_t{1}, size_t{4096}, (size_t{3} << 20) / sizeof(Slot) + 5}) {
    INFO(size);
    ZeroedArray<Slot> slots(size);
    REQUIRE(slots.size() == size);
    size_t empty = 0;
    for (const Slot& slot : slots) empty += slot.key == 0 && slot.next == nullptr && slot.mode == 0;
    CHECK(empty == size);
    slots[size - 1].key = 7;  // the last slot is writable
    CHECK(slots[size - 1].key == 7);
    const bool large = size * sizeof(Slot) >= HugeSlabs::kSlabBytes;
    CHECK(slots.mapped() == (large && !HugeSlabs::PiecesOnTheHeap()));
  }
}

TEST_CASE("a zeroed array moves its slots; the moved-from one is empty") {
  ZeroedArray<uint64_t> a(100);
  a[3] = 9;
  ZeroedArray<uint64_t> b = std::move(a);
  CHECK(a.size() == 0);
  CHECK(a.begin() == a.end());
  REQUIRE(b.size() == 100);
  CHECK(b[3] == 9);
  ZeroedArray<uint64_t> c(size_t{1} << 19);  // 4 MiB: mapped
  c = std::move(b);                          // the mapping goes
  CHECK(c[3] == 9);
  CHECK(c.size() == 100);
  ZeroedArray<uint64_t> none;
  CHECK(none.size() == 0);
}

}  // namespace
}  // namespace ptprof
