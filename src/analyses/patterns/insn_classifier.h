#pragma once
// InsnClassifier answers "how long is this instruction, and which pattern atoms does it match?":
// the disassembly comes from InsnDecoder, the atoms from a PatternMatcher. x86 instructions whose
// mnemonic no pattern names are only length-decoded, never formatted, which keeps each
// classification cheap. It keeps no answers: its callers keep what they need per block
// (BlockExpander), since an address is rarely met in more than one distinct block.
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>

#include "sideband/image_set.h"
#include "src/model/zeroed_array.h"
#include "src/analyses/patterns/insn_decoder.h"
#include "src/analyses/patterns/pattern_matcher.h"

namespace ptprof::patterns {

struct ClassifiedInsn {
  uint8_t length = 0;  // 0: no code or undecodable bytes
  uint64_t atoms = 0;
};

class InsnClassifier {
 public:
  InsnClassifier(const ImageSet& images, const PatternMatcher& matcher)
      : images_(images), matcher_(matcher) {}

  // The instruction at the start of `bytes` (`size` of them: what the image holds from `ip` on,
  // at most 16 are looked at), executed at `ip` in `mode`.
  ClassifiedInsn Classify(uint64_t ip, const uint8_t* bytes, size_t size, ExecMode mode);
  // The instruction at `ip` in the session's images.
  ClassifiedInsn At(uint64_t ip, ExecMode mode);

  // The disassembly at `ip` ("" when there is none), for reports.
  std::string Describe(uint64_t ip, ExecMode mode) const;

  const ImageSet& images() const { return images_; }
  // Instructions classified so far (with no code found: not counted).
  uint64_t decoded() const { return decoded_; }
  // Of those, how many needed their operands (a mnemonic some pattern asks for).
  uint64_t disassembled() const { return disassembled_; }

 private:
  // The length and mnemonic of the instruction, without its operands (nullopt: it does not
  // decode).
  std::optional<InsnDecoder::Quick> Quick(const uint8_t* bytes, size_t size, ExecMode mode);

  const ImageSet& images_;
  const PatternMatcher& matcher_;
  InsnDecoder decoder_;
  std::unordered_map<const char*, uint64_t> candidates_;  // by x86 mnemonic (static storage)
  // The mnemonic of each plain instruction key met (PlainInsnOf), filled when first met.
  ZeroedArray<const char*> plain_mnemonics_;
  uint64_t decoded_ = 0;
  uint64_t disassembled_ = 0;
};

}  // namespace ptprof::patterns
