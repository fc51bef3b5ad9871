#pragma once
// ByteCursor answers "what little-endian value is next in this buffer, and is there room for it?":
// every read is bounds-checked and reports failure instead of reading past the end, so that the
// perf.data parsers never trust a size field they have not checked. Offsets are absolute (the
// position in the file the buffer came from) so that errors can name them.
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>

namespace ptprof::perf {

class ByteCursor {
 public:
  ByteCursor() = default;
  // `base` is the file offset of bytes[0].
  explicit ByteCursor(std::span<const uint8_t> bytes, uint64_t base = 0) : bytes_(bytes), base_(base) {}

  size_t remaining() const { return bytes_.size() - pos_; }
  size_t position() const { return pos_; }
  uint64_t offset() const { return base_ + pos_; }  // absolute offset of the next byte
  bool empty() const { return pos_ == bytes_.size(); }

  bool Skip(uint64_t n) {
    if (n > remaining()) return false;
    pos_ += static_cast<size_t>(n);
    return true;
  }

  template <class T>
  bool Read(T& value) {
    static_assert(std::is_trivially_copyable_v<T>);
    if (sizeof(T) > remaining()) return false;
    std::memcpy(&value, bytes_.data() + pos_, sizeof(T));  // hosts are little-endian (checked by the reader)
    pos_ += sizeof(T);
    return true;
  }

  // The next `n` bytes as a span (fails when fewer remain).
  bool Bytes(uint64_t n, std::span<const uint8_t>& out) {
    if (n > remaining()) return false;
    out = bytes_.subspan(pos_, static_cast<size_t>(n));
    pos_ += static_cast<size_t>(n);
    return true;
  }

  // A NUL-padded string field of `n` bytes: the text before the first NUL.
  bool String(uint64_t n, std::string& out) {
    std::span<const uint8_t> field;
    if (!Bytes(n, field)) return false;
    size_t len = 0;
    while (len < field.size() && field[len] != 0) ++len;
    out.assign(reinterpret_cast<const char*>(field.data()), len);
    return true;
  }

  // The rest of the buffer as a NUL-terminated string (perf's variable-length name fields).
  std::string RestAsString() {
    std::string out;
    String(remaining(), out);
    return out;
  }

 private:
  std::span<const uint8_t> bytes_;
  uint64_t base_ = 0;
  size_t pos_ = 0;
};

}  // namespace ptprof::perf
