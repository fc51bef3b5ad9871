#include "src/model/huge_allocator.h"

#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "src/model/huge_slabs.h"

namespace ptprof {
namespace {

TEST_CASE("a vector on the huge allocator grows past a slab and keeps its values") {
  std::vector<double, HugeAllocator<double>> values;
  const size_t count = (size_t{5} << 20) / sizeof(double);  // 5 MiB: three mapped reallocations
  for (size_t i = 0; i < count; ++i) values.push_back(static_cast<double>(i));
  REQUIRE(values.size() == count);
  size_t right = 0;
  for (size_t i = 0; i < count; ++i) right += values[i] == static_cast<double>(i);
  CHECK(right == count);
  if (!HugeSlabs::PiecesOnTheHeap()) {
    // Past 2 MiB the storage is a huge-page mapping: aligned to its 2 MiB.
    CHECK(reinterpret_cast<uintptr_t>(values.data()) % HugeSlabs::kSlabBytes == 0);
  }
  std::vector<double, HugeAllocator<double>> copy = values;  // a mapping of its own
  CHECK(copy == values);
  values.clear();
  values.shrink_to_fit();  // back to nothing
  CHECK(copy.back() == static_cast<double>(count - 1));
}

TEST_CASE("small and over-aligned allocations come from the heap") {
  struct alignas(64) Wide {
    uint8_t bytes[64];
  };
  HugeAllocator<Wide> wide;
  Wide* one = wide.allocate(3);
  CHECK(reinterpret_cast<uintptr_t>(one) % 64 == 0);
  wide.deallocate(one, 3);
  std::vector<int, HugeAllocator<int>> few = {1, 2, 3};
  CHECK(few[2] == 3);
}

}  // namespace
}  // namespace ptprof
