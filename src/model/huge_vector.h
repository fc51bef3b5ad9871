#pragma once
// HugeVector answers "where does a vector of millions of plain values grow?": like a std::vector
// of a trivially copyable type, but from 2 MiB on in a mapping of huge pages that grows by moving
// its pages to a larger mapping (GrowHuge) instead of copying them into fresh memory. A
// std::vector that doubles (even with HugeAllocator) faults in and zeroes about twice its final
// size, and copies what it had at each step; a delta profile's values on a frequent pair (1.3
// million intervals on sort) spent an eighth of the run there. Under AddressSanitizer it stays
// on the heap (HugeSlabs::PiecesOnTheHeap), so overruns are still reported.
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <new>
#include <type_traits>
#include <utility>

#include "src/model/huge_slabs.h"

namespace ptprof {

template <typename T>
class HugeVector {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  HugeVector() = default;
  HugeVector(std::initializer_list<T> values) {
    for (const T& v : values) push_back(v);
  }
  HugeVector(const HugeVector& other) {
    Reserve(other.size_);
    if (other.size_) std::memcpy(data_, other.data_, other.size_ * sizeof(T));
    size_ = other.size_;
  }
  HugeVector(HugeVector&& other) noexcept { Swap(other); }
  HugeVector& operator=(HugeVector other) noexcept {
    Swap(other);
    return *this;
  }
  ~HugeVector() { Release(); }

  // The `count` values at `values`, in place of what it held (its memory kept where it suffices).
  void assign(const T* values, size_t count) {
    size_ = 0;
    Reserve(count);
    if (count) std::memcpy(data_, values, count * sizeof(T));
    size_ = count;
  }
  void push_back(const T& value) {
    if (size_ == capacity_) Reserve(size_ + 1);
    data_[size_++] = value;
  }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* data() { return data_; }
  const T* data() const { return data_; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  bool operator==(const HugeVector& other) const {
    return size_ == other.size_ && (size_ == 0 || std::memcmp(data_, other.data_, size_ * sizeof(T)) == 0);
  }
  // Whether the values lie in a mapping of huge pages (for the tests).
  bool mapped() const { return mapped_; }

 private:
  static constexpr size_t kSlab = HugeSlabs::kSlabBytes;

  // Room for at least `count` values: on the heap below a slab, else in a mapping, doubling.
  void Reserve(size_t count) {
    if (count <= capacity_) return;
    size_t want = capacity_ ? capacity_ * 2 : 16;
    if (want < count) want = count;
    const size_t bytes = want * sizeof(T);
    if (bytes < kSlab || HugeSlabs::PiecesOnTheHeap()) {
      void* grown = std::realloc(data_, bytes);
      if (!grown) throw std::bad_alloc();
      data_ = static_cast<T*>(grown);
    } else {
      const size_t rounded = (bytes + kSlab - 1) / kSlab * kSlab;
      if (mapped_) {
        data_ = static_cast<T*>(GrowHuge(data_, mapped_bytes_, rounded));
      } else {
        T* mapped = static_cast<T*>(MapHuge(rounded));
        if (size_) std::memcpy(mapped, data_, size_ * sizeof(T));
        std::free(data_);
        data_ = mapped;
        mapped_ = true;
      }
      mapped_bytes_ = rounded;
      want = rounded / sizeof(T);
    }
    capacity_ = want;
  }
  void Release() {
    if (mapped_)
      UnmapHuge(data_, mapped_bytes_);
    else
      std::free(data_);
    data_ = nullptr;
    size_ = capacity_ = mapped_bytes_ = 0;
    mapped_ = false;
  }
  void Swap(HugeVector& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    std::swap(capacity_, other.capacity_);
    std::swap(mapped_bytes_, other.mapped_bytes_);
    std::swap(mapped_, other.mapped_);
  }

  T* data_ = nullptr;
  size_t size_ = 0, capacity_ = 0;
  size_t mapped_bytes_ = 0;  // the mapping's size, when mapped_
  bool mapped_ = false;
};

}  // namespace ptprof
