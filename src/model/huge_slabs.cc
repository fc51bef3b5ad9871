#include "src/model/huge_slabs.h"

#include <sys/mman.h>

#include <cstdint>
#include <new>

namespace ptprof {

namespace {

// kSlabBytes aligned to kSlabBytes: twice that mapped, the ends around the aligned middle unmapped.
void* MapAlignedSlab() {
  constexpr size_t kSlab = HugeSlabs::kSlabBytes;
  void* mapped = mmap(nullptr, 2 * kSlab, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapped == MAP_FAILED) throw std::bad_alloc();
  const auto begin = reinterpret_cast<uintptr_t>(mapped);
  const uintptr_t aligned = (begin + kSlab - 1) & ~(uintptr_t{kSlab} - 1);
  if (aligned > begin) munmap(mapped, aligned - begin);
  if (const uintptr_t end = begin + 2 * kSlab; end > aligned + kSlab)
    munmap(reinterpret_cast<void*>(aligned + kSlab), end - (aligned + kSlab));
  void* slab = reinterpret_cast<void*>(aligned);
#ifdef MADV_HUGEPAGE
  madvise(slab, kSlab, MADV_HUGEPAGE);  // a hint: without transparent huge pages, 4 KiB pages
#endif
  return slab;
}

}  // namespace

HugeSlabs::~HugeSlabs() {
  for (void* slab : slabs_) munmap(slab, kSlabBytes);
}

void* HugeSlabs::Carve(size_t bytes, size_t align) {
  used_ = (used_ + align - 1) & ~(align - 1);
  if (bytes > kSlabBytes) throw std::bad_alloc();
  if (slabs_.empty() || used_ > kSlabBytes || bytes > kSlabBytes - used_) {
    slabs_.reserve(slabs_.size() + 1);  // before mapping, so that a throw here leaks nothing
    slabs_.push_back(MapAlignedSlab());
    used_ = 0;
  }
  void* out = static_cast<char*>(slabs_.back()) + used_;
  used_ += bytes;
  return out;
}

}  // namespace ptprof
