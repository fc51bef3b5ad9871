#pragma once
// HugeSlabs answers "where do a parallel decode's tens of megabytes of short-lived event records
// go?" with 2 MiB slabs, aligned to 2 MiB and marked MADV_HUGEPAGE, so that the kernel may back
// each with one huge page: one page fault per slab instead of 512. Fresh memory is paid for page
// by page on first touch, and on some virtual machines a fault costs tens of microseconds (19 us
// a 4 KiB page on the development VM, docs/performance.md), which made a 32 MB burst of chunks
// cost more than the decode that filled them. Where the kernel gives no huge page the slab is
// ordinary memory. A new slab comes from TakeSlab (src/model/slab_supply.h), its pages faulted in
// ahead on a helper thread when it had one ready, or one an earlier HugeSlabs gave back. Slabs
// live until the HugeSlabs is destroyed and then go back (GiveSlab) for the next; nothing is
// zeroed, so a piece holds whatever its slab last held.
// Built with AddressSanitizer, each piece is a heap allocation of its own instead (the slabs are
// only counted), so that reading or writing past a piece is reported as it was before the slabs.
#include <cstddef>
#include <vector>

namespace ptprof {

class HugeSlabs {
 public:
  static constexpr size_t kSlabBytes = size_t{2} << 20;
  HugeSlabs() = default;
  ~HugeSlabs();
  HugeSlabs(const HugeSlabs&) = delete;
  HugeSlabs& operator=(const HugeSlabs&) = delete;

  // `bytes` (at most kSlabBytes) of memory, not initialised, aligned to `align` (a power of
  // two, at most 4096), carved from the current slab or a new one. Throws std::bad_alloc when
  // the system has no memory left.
  void* Carve(size_t bytes, size_t align = 64);
  size_t slabs() const { return slabs_.size(); }
  // Whether pieces are heap allocations of their own (an AddressSanitizer build): their layout
  // within a slab then means nothing, only the slabs' count does.
  static bool PiecesOnTheHeap();

 private:
  struct Piece {
    void* memory;
    size_t align;
  };
  std::vector<void*> slabs_;  // null under AddressSanitizer
  std::vector<Piece> pieces_;  // under AddressSanitizer: every piece carved
  size_t used_ = kSlabBytes;  // bytes of the last slab carved (full: none yet)
};

// `bytes` (a multiple of HugeSlabs::kSlabBytes) of fresh memory aligned to kSlabBytes and marked
// MADV_HUGEPAGE, for one large buffer; UnmapHuge gives it back. Throws std::bad_alloc.
void* MapHuge(size_t bytes);
void UnmapHuge(void* memory, size_t bytes);
// `memory` (from MapHuge, `bytes` long) grown to `new_bytes` (a larger multiple of
// kSlabBytes): its pages are moved, not copied, to the start of a new mapping (mremap), so that
// only the pages past them are fresh memory. The contents are kept; `memory` is no longer
// valid. Throws std::bad_alloc (then `memory` is unchanged).
void* GrowHuge(void* memory, size_t bytes, size_t new_bytes);
// Has the kernel fault in, writable, every whole 4 KiB page of [memory, memory + bytes) that is
// not in memory yet, now and in one call (MADV_POPULATE_WRITE; a write to each page before
// Linux 5.14). For fresh memory that will be written all over anyway: a table read before it
// is written (an open-addressing table being filled) otherwise has each page mapped to the
// kernel's shared zero page on the read and copied on the write, and with a second thread in
// the process that copy interrupts the other CPU to flush its TLB. The contents are kept.
void FaultInForWriting(void* memory, size_t bytes);

}  // namespace ptprof
