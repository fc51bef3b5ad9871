#pragma once
// LineCache keeps the lines a writer formatted last, by what each was made from: a flow repeats
// the same blocks and branches (a loop's, over and over), and a line that is a function of a few
// numbers (addresses, a count, a kind; the symbol of an address) is then formatted, and its
// symbols looked up, once instead of at every turn. Direct-mapped: a line made again replaces
// whatever shared its slot. It starts with 4096 lines and doubles, up to 65536, while more than
// one lookup in 128 of the last 65536 had to make its line (a flow whose loops run through more
// distinct blocks or instructions than it holds); doubling starts it empty.
#include <cstdint>
#include <string>
#include <vector>

namespace ptprof {

class LineCache {
 public:
  struct Key {
    uint64_t a = 0, b = 0, c = 0;
    bool operator==(const Key&) const = default;
  };

  // The line made from `key`: `format(line)` writes it into an empty string when it is not kept.
  template <class Format>
  const std::string& Line(const Key& key, Format&& format) {
    if (slots_.empty()) slots_.resize(size_t{1} << kFirstBits);
    if (++lookups_ == kWindow) Review();
    // Keys whose first numbers are near each other (the instructions of a block, one after the
    // other) go to slots near each other, which the CPU then fetches ahead.
    const uint64_t spread = (key.b * 0xbf58476d1ce4e5b9ULL ^ key.c * 0x94d049bb133111ebULL) >> 40;
    Slot& slot = slots_[(key.a + spread) & (slots_.size() - 1)];
    if (!slot.used || !(slot.key == key)) {
      ++made_;
      slot.used = true;
      slot.key = key;
      slot.line.clear();
      format(slot.line);
    }
    return slot.line;
  }

  // How many lines it can hold now.
  size_t capacity() const { return slots_.empty() ? size_t{1} << kFirstBits : slots_.size(); }

 private:
  static constexpr int kFirstBits = 12;
  static constexpr int kMostBits = 16;
  static constexpr uint32_t kWindow = 1 << 16;
  // At the end of each window of lookups: doubles when too many made their line.
  void Review() {
    if (made_ * 128 > kWindow && slots_.size() < (size_t{1} << kMostBits)) {
      slots_ = std::vector<Slot>(2 * slots_.size());
    }
    lookups_ = 0;
    made_ = 0;
  }
  struct Slot {
    bool used = false;
    Key key;
    std::string line;
  };
  std::vector<Slot> slots_;  // made at the first line
  uint32_t lookups_ = 0, made_ = 0;  // in the current window
};

}  // namespace ptprof
