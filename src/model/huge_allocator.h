#pragma once
// HugeAllocator answers "where does a large, growing std::vector go?": a standard allocator that
// puts any allocation of 2 MiB or more in a mapping of huge pages (MapHuge), faulted in 2 MiB at
// a time, and anything smaller on the heap as std::allocator would. A vector of millions of values
// (a delta profile's 3 million intervals) reallocates into fresh memory as it doubles, and on this
// VM each 4 KiB page of fresh memory costs a fault of about 19 us (docs/performance.md, "Fresh
// memory"). Under AddressSanitizer everything comes from the heap, so overruns are still reported.
#include <cstddef>

namespace ptprof {

namespace huge_allocator_detail {
// `bytes` aligned to `align`; Free must be given the same bytes and align. Throws std::bad_alloc.
void* Allocate(size_t bytes, size_t align);
void Free(void* memory, size_t bytes, size_t align) noexcept;
}  // namespace huge_allocator_detail

template <typename T>
struct HugeAllocator {
  using value_type = T;
  HugeAllocator() = default;
  template <typename U>
  HugeAllocator(const HugeAllocator<U>&) noexcept {}
  T* allocate(size_t n) {
    return static_cast<T*>(huge_allocator_detail::Allocate(n * sizeof(T), alignof(T)));
  }
  void deallocate(T* memory, size_t n) noexcept {
    huge_allocator_detail::Free(memory, n * sizeof(T), alignof(T));
  }
  template <typename U>
  bool operator==(const HugeAllocator<U>&) const noexcept {
    return true;
  }
};

}  // namespace ptprof
