#pragma once
// ZeroedArray answers "where does a large table of empty slots go?": an array of `size` elements
// whose bytes all start as zero, for the open-addressing tables of the decode and the analyses
// (TNT runs, instruction caches) that double as they fill. A std::vector value-initialises its
// elements, writing every byte of memory that is fresh anyway, and on this VM each 4 KiB page of
// fresh memory costs a fault of about 19 us (docs/performance.md, "Fresh memory"): a compiler's
// 24 MB instruction table cost more to grow than to fill. Here an array of 2 MiB or more is a
// mapping in huge pages (MapHuge), zero from the kernel and faulted in 2 MiB at a time; a smaller
// one comes zeroed from calloc. Under AddressSanitizer every array comes from calloc, so overruns
// are still reported. A table that will be written all over (one that grew to twice the size of
// a table at least half full, its entries about to be placed again) asks for its pages faulted
// in when it is made (Pages::kFaultedIn): placing entries reads each slot before writing it, and
// a page first read and then written is faulted twice (FaultInForWriting, huge_slabs.h).
#include <cstddef>
#include <type_traits>
#include <utility>

namespace ptprof {

namespace zeroed_array_detail {
// `bytes` of zeroed memory; `mapped` says whether it is a mapping (its length in bytes) or heap.
// Throws std::bad_alloc.
// From this size on an array that asks for it has its pages faulted in when it is made; smaller
// ones mostly come from heap memory in use already.
inline constexpr size_t kFaultedInBytes = size_t{64} << 10;
// `fault_in`: the pages faulted in, writable, now (for arrays of kFaultedInBytes or more).
void* Allocate(size_t bytes, size_t& mapped, bool fault_in);
void Free(void* memory, size_t mapped);
}  // namespace zeroed_array_detail

// Whether an array's pages are faulted in as it is used (for one used sparsely: only the pages
// touched take memory) or all at once when it is made (for one that will be written all over).
enum class Pages { kOnDemand, kFaultedIn };

template <typename T>
class ZeroedArray {
  // All-zero bytes must be a valid, empty T (true of integers, pointers and aggregates of them on
  // the targets ptprof builds for), and nothing must need destroying.
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);

 public:
  ZeroedArray() = default;
  explicit ZeroedArray(size_t size, Pages pages = Pages::kOnDemand) : size_(size) {
    if (size)
      data_ = static_cast<T*>(zeroed_array_detail::Allocate(size * sizeof(T), mapped_,
                                                            pages == Pages::kFaultedIn));
  }
  ~ZeroedArray() { zeroed_array_detail::Free(data_, mapped_); }
  ZeroedArray(ZeroedArray&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)),
        size_(std::exchange(other.size_, 0)),
        mapped_(std::exchange(other.mapped_, 0)) {}
  ZeroedArray& operator=(ZeroedArray&& other) noexcept {
    if (this != &other) {
      zeroed_array_detail::Free(data_, mapped_);
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
      mapped_ = std::exchange(other.mapped_, 0);
    }
    return *this;
  }
  ZeroedArray(const ZeroedArray&) = delete;
  ZeroedArray& operator=(const ZeroedArray&) = delete;

  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  size_t size() const { return size_; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  // Whether the array is a huge-page mapping (for tests).
  bool mapped() const { return mapped_ != 0; }

 private:
  T* data_ = nullptr;
  size_t size_ = 0;
  size_t mapped_ = 0;  // bytes, when mapped in huge pages (HugeAllocator); 0: from calloc
};

}  // namespace ptprof
