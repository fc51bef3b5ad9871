#pragma once
// LineCache keeps the lines a writer formatted last, by what each was made from: a flow repeats
// the same blocks and branches (a loop's, over and over), and a line that is a function of a few
// numbers (addresses, a count, a kind; the symbol of an address) is then formatted, and its
// symbols looked up, once instead of at every turn. 4096 lines, direct-mapped: a line made again
// replaces whatever shared its slot.
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
    if (slots_.empty()) slots_.resize(kSlots);
    const uint64_t hash =
        key.a * 0x9e3779b97f4a7c15ULL ^ key.b * 0xbf58476d1ce4e5b9ULL ^ key.c * 0x94d049bb133111ebULL;
    Slot& slot = slots_[hash >> (64 - kSlotBits)];
    if (!slot.used || !(slot.key == key)) {
      slot.used = true;
      slot.key = key;
      slot.line.clear();
      format(slot.line);
    }
    return slot.line;
  }

 private:
  static constexpr int kSlotBits = 12;
  static constexpr size_t kSlots = size_t{1} << kSlotBits;
  struct Slot {
    bool used = false;
    Key key;
    std::string line;
  };
  std::vector<Slot> slots_;  // made at the first line
};

}  // namespace ptprof
