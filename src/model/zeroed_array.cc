#include "src/model/zeroed_array.h"

#include <cstddef>
#include <cstdlib>
#include <new>

#include "src/model/huge_allocator.h"
#include "src/model/huge_slabs.h"

namespace ptprof::zeroed_array_detail {

void* Allocate(size_t bytes, size_t& mapped, bool fault_in) {
  void* memory = nullptr;
  if (bytes >= HugeSlabs::kSlabBytes && !HugeSlabs::PiecesOnTheHeap()) {
    // HugeAllocator maps this in huge pages: anonymous memory, zero from the kernel.
    memory = huge_allocator_detail::Allocate(bytes, alignof(std::max_align_t));
    mapped = bytes;
  } else {
    mapped = 0;
    memory = std::calloc(bytes, 1);
    if (!memory) throw std::bad_alloc();
  }
  if (fault_in && bytes >= kFaultedInBytes) FaultInForWriting(memory, bytes);
  return memory;
}

void Free(void* memory, size_t mapped) {
  if (mapped)
    huge_allocator_detail::Free(memory, mapped, alignof(std::max_align_t));
  else
    std::free(memory);
}

}  // namespace ptprof::zeroed_array_detail
