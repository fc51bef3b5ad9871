#include "src/model/zeroed_array.h"

#include <cstdlib>
#include <new>

#include "src/model/huge_slabs.h"

namespace ptprof::zeroed_array_detail {

void* Allocate(size_t bytes, size_t& mapped) {
  constexpr size_t kSlab = HugeSlabs::kSlabBytes;
  if (bytes >= kSlab && !HugeSlabs::PiecesOnTheHeap()) {
    const size_t length = (bytes + kSlab - 1) / kSlab * kSlab;
    void* memory = MapHuge(length);  // anonymous: zero
    mapped = length;
    return memory;
  }
  mapped = 0;
  void* memory = std::calloc(bytes, 1);
  if (!memory) throw std::bad_alloc();
  return memory;
}

void Free(void* memory, size_t mapped) {
  if (mapped)
    UnmapHuge(memory, mapped);
  else
    std::free(memory);
}

}  // namespace ptprof::zeroed_array_detail
