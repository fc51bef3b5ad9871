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

#include "sideband/image_set.h"
#include "src/analyses/patterns/insn_decoder.h"
#include "src/analyses/patterns/pattern_matcher.h"

namespace ptprof::patterns {

struct CachedInsn {
  uint8_t length = 0;  // 0: no code or undecodable bytes at the address
  uint64_t atoms = 0;
};

class InsnCache {
 public:
  InsnCache(const ImageSet& images, const PatternMatcher& matcher)
      : images_(images), matcher_(matcher) {}

  const CachedInsn& At(uint64_t ip, ExecMode mode);

  // The disassembly at `ip` ("" when there is none), for reports; not cached.
  std::string Describe(uint64_t ip, ExecMode mode) const;

  uint64_t decoded() const { return decoded_; }
  // Of those, how many needed their operands (a mnemonic some pattern asks for).
  uint64_t disassembled() const { return disassembled_; }

 private:
  const ImageSet& images_;
  const PatternMatcher& matcher_;
  InsnDecoder decoder_;
  std::array<std::unordered_map<uint64_t, CachedInsn>, 7> by_mode_;
  std::unordered_map<const char*, uint64_t> candidates_;  // by x86 mnemonic (static storage)
  uint64_t decoded_ = 0;
  uint64_t disassembled_ = 0;
};

}  // namespace ptprof::patterns
