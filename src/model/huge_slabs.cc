#include "src/model/huge_slabs.h"

#include <sys/mman.h>

#include <cstdint>
#include <cstring>
#include <new>

#include "src/model/slab_supply.h"

#if defined(__SANITIZE_ADDRESS__)
#define PTPROF_HUGE_SLABS_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PTPROF_HUGE_SLABS_ASAN 1
#endif
#endif

namespace ptprof {

namespace {

#ifdef PTPROF_HUGE_SLABS_ASAN
constexpr bool kPiecesOnTheHeap = true;
#else
constexpr bool kPiecesOnTheHeap = false;
#endif

}  // namespace

// What is asked for and one slab more mapped, the ends around the aligned middle unmapped.
void* MapHuge(size_t bytes) {
  constexpr size_t kSlab = HugeSlabs::kSlabBytes;
  if (bytes == 0 || bytes % kSlab != 0) throw std::bad_alloc();
  void* mapped = mmap(nullptr, bytes + kSlab, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapped == MAP_FAILED) throw std::bad_alloc();
  const auto begin = reinterpret_cast<uintptr_t>(mapped);
  const uintptr_t aligned = (begin + kSlab - 1) & ~(uintptr_t{kSlab} - 1);
  if (aligned > begin) munmap(mapped, aligned - begin);
  if (const uintptr_t end = begin + bytes + kSlab; end > aligned + bytes)
    munmap(reinterpret_cast<void*>(aligned + bytes), end - (aligned + bytes));
  void* memory = reinterpret_cast<void*>(aligned);
#ifdef MADV_HUGEPAGE
  madvise(memory, bytes, MADV_HUGEPAGE);  // a hint: without transparent huge pages, 4 KiB pages
#endif
  return memory;
}

void FaultInForWriting(void* memory, size_t bytes) {
  constexpr uintptr_t kPage = 4096;
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(memory) + kPage - 1) & ~(kPage - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(memory) + bytes) & ~(kPage - 1);
  if (end <= begin) return;
#ifdef MADV_POPULATE_WRITE
  if (madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE) == 0) return;
#endif
  // An older kernel: a write of each page's first byte, as it is (the contents are kept).
  for (uintptr_t page = begin; page < end; page += kPage) {
    auto* byte = reinterpret_cast<volatile unsigned char*>(page);
    *byte = *byte;
  }
}

void UnmapHuge(void* memory, size_t bytes) {
  if (memory) munmap(memory, bytes);
}

void* GrowHuge(void* memory, size_t bytes, size_t new_bytes) {
  void* grown = MapHuge(new_bytes);
  // Moved over the start of the new mapping, which MREMAP_FIXED replaces: both are aligned to
  // the slab size, so huge pages move as they are.
  if (mremap(memory, bytes, bytes, MREMAP_MAYMOVE | MREMAP_FIXED, grown) == MAP_FAILED) {
    std::memcpy(grown, memory, bytes);
    UnmapHuge(memory, bytes);
  }
  return grown;
}

bool HugeSlabs::PiecesOnTheHeap() { return kPiecesOnTheHeap; }

HugeSlabs::~HugeSlabs() {
  for (void* slab : slabs_) GiveSlab(slab);  // the next HugeSlabs may take it (null: none)
  for (const Piece& piece : pieces_) ::operator delete(piece.memory, std::align_val_t{piece.align});
}

void* HugeSlabs::Carve(size_t bytes, size_t align) {
  used_ = (used_ + align - 1) & ~(align - 1);
  if (bytes > kSlabBytes) throw std::bad_alloc();
  if (slabs_.empty() || used_ > kSlabBytes || bytes > kSlabBytes - used_) {
    slabs_.reserve(slabs_.size() + 1);  // before mapping, so that a throw here leaks nothing
    slabs_.push_back(kPiecesOnTheHeap ? nullptr : TakeSlab());  // faulted in ahead
    used_ = 0;
  }
  if (kPiecesOnTheHeap) {
    pieces_.reserve(pieces_.size() + 1);
    void* memory = ::operator new(bytes ? bytes : 1, std::align_val_t{align});
    pieces_.push_back(Piece{memory, align});
    used_ += bytes;
    return memory;
  }
  void* out = static_cast<char*>(slabs_.back()) + used_;
  used_ += bytes;
  return out;
}

}  // namespace ptprof
