#pragma once
// HugeSlabs answers "where do a parallel decode's tens of megabytes of short-lived event records
// go?" with 2 MiB slabs, aligned to 2 MiB and marked MADV_HUGEPAGE, so that the kernel may back
// each with one huge page: one page fault per slab instead of 512. Fresh memory is paid for page
// by page on first touch, and on some virtual machines a fault costs tens of microseconds (19 us
// a 4 KiB page on the development VM, docs/performance.md), which made a 32 MB burst of chunks
// cost more than the decode that filled them. Where the kernel gives no huge page the slab is
// ordinary memory. Slabs live until the HugeSlabs is destroyed; nothing is zeroed by hand.
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

  // `bytes` (at most kSlabBytes) of fresh memory aligned to `align` (a power of two, at most
  // 4096), carved from the current slab or a new one. Throws std::bad_alloc when the system has
  // no memory left.
  void* Carve(size_t bytes, size_t align = 64);
  size_t slabs() const { return slabs_.size(); }

 private:
  std::vector<void*> slabs_;
  size_t used_ = kSlabBytes;  // bytes of the last slab carved (full: none yet)
};

}  // namespace ptprof
