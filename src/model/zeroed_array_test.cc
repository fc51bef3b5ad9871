#include "src/model/zeroed_array.h"

#include <catch2/catch.hpp>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <utility>
#include <vector>

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

// The whole pages of [begin, begin + bytes): the first one's address and their count.
std::pair<uintptr_t, size_t> WholePages(const void* begin, size_t bytes) {
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t first = (reinterpret_cast<uintptr_t>(begin) + page - 1) & ~(page - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(begin) + bytes) & ~(page - 1);
  return {first, end > first ? (end - first) / page : 0};
}

// How many of the whole pages of [begin, begin + bytes) are in memory.
size_t ResidentPages(const void* begin, size_t bytes) {
  const auto [first, pages] = WholePages(begin, bytes);
  if (pages == 0) return 0;
  const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> in(pages);
  REQUIRE(mincore(reinterpret_cast<void*>(first), pages * page, in.data()) == 0);
  size_t resident = 0;
  for (unsigned char flags : in) resident += flags & 1;
  return resident;
}

TEST_CASE("a zeroed array made for writing all over has its pages in memory, all zero") {
  for (size_t size : {size_t{100}, size_t{20000}, size_t{1} << 19}) {  // heap, calloc, mapped
    INFO(size);
    ZeroedArray<uint64_t> slots(size, Pages::kFaultedIn);
    REQUIRE(slots.size() == size);
    const size_t bytes = size * sizeof(uint64_t);
    if (bytes >= zeroed_array_detail::kFaultedInBytes)
      CHECK(ResidentPages(slots.begin(), bytes) == WholePages(slots.begin(), bytes).second);
    size_t zero = 0;
    for (uint64_t slot : slots) zero += slot == 0;
    CHECK(zero == size);
  }
  // A mapping made on demand has nothing in memory until it is touched.
  if (!HugeSlabs::PiecesOnTheHeap()) {
    ZeroedArray<uint64_t> lazy(size_t{1} << 19);
    CHECK(ResidentPages(lazy.begin(), lazy.size() * sizeof(uint64_t)) == 0);
  }
}

TEST_CASE("faulting pages in for writing keeps what they hold, whatever the range's ends") {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t bytes = 8 * page;
  void* mapped = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(mapped != MAP_FAILED);
  auto* memory = static_cast<unsigned char*>(mapped);
  memory[page + 5] = 42;  // one page written before
  CHECK(ResidentPages(memory, bytes) == 1);
  FaultInForWriting(memory + 10, 0);  // nothing
  FaultInForWriting(memory + 10, page);  // no whole page
  CHECK(ResidentPages(memory, bytes) == 1);
  FaultInForWriting(memory + 10, 5 * page);  // pages 1 to 4 whole
  CHECK(ResidentPages(memory, bytes) == 4);
  CHECK(memory[page + 5] == 42);
  size_t zero = 0;
  for (size_t i = 2 * page; i < 5 * page; ++i) zero += memory[i] == 0;
  CHECK(zero == 3 * page);
  munmap(mapped, bytes);
}

}  // namespace
}  // namespace ptprof
