#include "src/model/huge_allocator.h"

#include <new>

#include "src/model/huge_slabs.h"

namespace ptprof::huge_allocator_detail {

namespace {

constexpr size_t kSlab = HugeSlabs::kSlabBytes;

bool Mapped(size_t bytes) { return bytes >= kSlab && !HugeSlabs::PiecesOnTheHeap(); }
size_t Rounded(size_t bytes) { return (bytes + kSlab - 1) / kSlab * kSlab; }

}  // namespace

void* Allocate(size_t bytes, size_t align) {
  if (Mapped(bytes)) return MapHuge(Rounded(bytes));  // aligned to 2 MiB
  if (align > __STDCPP_DEFAULT_NEW_ALIGNMENT__) return ::operator new(bytes, std::align_val_t{align});
  return ::operator new(bytes);
}

void Free(void* memory, size_t bytes, size_t align) noexcept {
  if (!memory) return;
  if (Mapped(bytes)) {
    UnmapHuge(memory, Rounded(bytes));
  } else if (align > __STDCPP_DEFAULT_NEW_ALIGNMENT__) {
    ::operator delete(memory, std::align_val_t{align});
  } else {
    ::operator delete(memory);
  }
}

}  // namespace ptprof::huge_allocator_detail
