#pragma once
// SharedBytes answers "where are the bytes of this input, and who keeps them alive?" without
// copying them: either a buffer it owns (a decompressed archive member, concatenated AUX buffers)
// or a read-only mapping of a file (a raw trace, a perf.data), so that a trace of several GB is
// paged in by the kernel as the decoder reads it instead of being read into the heap first.
// Slices share their owner: a stream that is one piece of a mapped perf.data costs no copy.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "src/model/result.h"

namespace ptprof {

class SharedBytes {
 public:
  SharedBytes() = default;
  explicit SharedBytes(std::vector<uint8_t> owned);

  // How the bytes will be read: front to back (a trace: the kernel reads ahead and drops what was
  // read), or anywhere (code images).
  enum class Access { kSequential, kRandom };
  // The whole file at `path`, mapped read-only (a regular file), else read (a pipe, a device).
  // Errors name the file. An empty file gives empty bytes.
  static Result<SharedBytes> MapFile(const std::string& path, Access access = Access::kSequential);

  // `size` bytes of fresh memory that `fill` writes whole, then shared read-only: a decompressed
  // archive member. The memory is mapped in huge pages where the kernel gives them (one fault per
  // 2 MiB instead of per 4 KiB; src/model/huge_slabs.h), on the heap in an AddressSanitizer
  // build. An error of `fill` comes back as it is.
  static Result<SharedBytes> Filled(size_t size, const std::function<Status(uint8_t* out)>& fill);

  // [offset, offset + size) of these bytes, sharing their owner. The range must lie inside.
  SharedBytes Slice(uint64_t offset, uint64_t size) const;

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const uint8_t* begin() const { return data_; }
  const uint8_t* end() const { return data_ + size_; }
  const uint8_t& operator[](size_t i) const { return data_[i]; }
  std::span<const uint8_t> span() const { return {data_, size_}; }
  operator std::span<const uint8_t>() const { return span(); }  // NOLINT: a view, freely
  // A copy that the caller owns.
  std::vector<uint8_t> ToVector() const { return {begin(), end()}; }
  // Whether the bytes are a file mapping (not a heap buffer).
  bool mapped() const { return mapped_; }

  friend bool operator==(const SharedBytes& a, const SharedBytes& b);
  friend bool operator==(const SharedBytes& a, const std::vector<uint8_t>& b);

 private:
  std::shared_ptr<const void> owner_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  bool mapped_ = false;
};

}  // namespace ptprof
