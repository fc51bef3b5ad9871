#pragma once
// InsnCache answers "how long is the instruction at this address, and which pattern atoms does it
// match?" once per address and mode: the code bytes come from the session's images, the
// disassembly from InsnDecoder, the atoms from a PatternMatcher; later executions of the same
// address cost one hash lookup. x86 instructions whose mnemonic no pattern names are only
// length-decoded, never formatted: that keeps the first visit of each address cheap. Code is assumed not to change while the trace runs (no
// self-modifying or re-JITted code at one address).
#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "sideband/image_set.h"
#include "src/analyses/patterns/insn_decoder.h"
#include "src/analyses/patterns/pattern_matcher.h"
#include "src/model/zeroed_array.h"

namespace ptprof::patterns {

struct CachedInsn {
  uint8_t length = 0;  // 0: no code or undecodable bytes at the address
  uint64_t atoms = 0;
};

class InsnCache {
 public:
  InsnCache(const ImageSet& images, const PatternMatcher& matcher)
      : images_(images), matcher_(matcher) {}

  CachedInsn At(uint64_t ip, ExecMode mode);

  // The disassembly at `ip` ("" when there is none), for reports; not cached.
  std::string Describe(uint64_t ip, ExecMode mode) const;

  uint64_t decoded() const { return decoded_; }
  // Of those, how many needed their operands (a mnemonic some pattern asks for).
  uint64_t disassembled() const { return disassembled_; }

 private:
  const ImageSet& images_;
  const PatternMatcher& matcher_;
  InsnDecoder decoder_;
  // The instructions seen, by mode and address: open addressing, linear probing, at most three
  // quarters full (534 K addresses on a compiler's trace, where a node per address made the
  // first visits cost more than the decode), 24 bytes a slot.
  struct Slot {
    uint64_t ip = 0;
    uint64_t atoms = 0;
    uint8_t length = 0;
    uint8_t mode = 0;  // 0: free; else the mode + 1
  };
  ZeroedArray<Slot> slots_ = ZeroedArray<Slot>(1 << 12);  // grows in huge pages
  size_t used_ = 0;
  // The slot for (ip, mode): its own, or the free one where it goes.
  Slot& SlotOf(uint64_t ip, uint8_t mode) {
    const size_t mask = slots_.size() - 1;
    size_t i = static_cast<size_t>(((ip ^ mode) * 0x9e3779b97f4a7c15ull) >> 20) & mask;
    while (slots_[i].mode && (slots_[i].ip != ip || slots_[i].mode != mode)) i = (i + 1) & mask;
    return slots_[i];
  }
  void Grow();
  std::unordered_map<const char*, uint64_t> candidates_;  // by x86 mnemonic (static storage)
  uint64_t decoded_ = 0;
  uint64_t disassembled_ = 0;
};

}  // namespace ptprof::patterns
