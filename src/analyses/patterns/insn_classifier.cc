#include "src/analyses/patterns/insn_classifier.h"

#include <algorithm>

#include "sideband/x86_length.h"

namespace ptprof::patterns {

ClassifiedInsn InsnClassifier::Classify(uint64_t ip, const uint8_t* bytes, size_t size,
                                        ExecMode mode) {
  if (size == 0) return {};
  size = std::min<size_t>(size, 16);
  ++decoded_;
  // Kernel-only patterns on user code, or a mnemonic no pattern names: the length is all we need.
  uint64_t candidates = matcher_.CandidatesAt(IsKernelAddress(ip, mode));
  if (auto quick = Quick(bytes, size, mode)) {
    auto [known, fresh] = candidates_.try_emplace(quick->mnemonic);
    if (fresh) known->second = matcher_.CandidatesFor(quick->mnemonic);
    candidates &= known->second;
    if (!candidates) return ClassifiedInsn{quick->length, 0};
  }
  ++disassembled_;
  auto text = decoder_.Decode(ip, bytes, size, mode);
  if (!text) return {};
  return ClassifiedInsn{text->length, matcher_.AtomsOf(*text, candidates)};
}

std::optional<InsnDecoder::Quick> InsnClassifier::Quick(const uint8_t* bytes, size_t size,
                                                        ExecMode mode) {
  if (mode == ExecMode::k64Bit) {
    // A plain instruction: its length from a table walk, its mnemonic from the first
    // instruction of the same key that Zydis decoded (sideband/x86_length.h).
    if (const PlainInsn plain = PlainInsnOf(bytes, size); plain.length != 0) {
      if (plain_mnemonics_.size() == 0) plain_mnemonics_ = ZeroedArray<const char*>(kPlainInsnKeys);
      const char*& mnemonic = plain_mnemonics_[plain.key];
      if (!mnemonic) {
        auto quick = decoder_.QuickX86(bytes, size, mode);
        if (!quick || quick->length != plain.length) return quick;
        mnemonic = quick->mnemonic;
      }
      return InsnDecoder::Quick{plain.length, mnemonic};
    }
  }
  return decoder_.QuickX86(bytes, size, mode);
}

ClassifiedInsn InsnClassifier::At(uint64_t ip, ExecMode mode) {
  uint8_t bytes[16];
  return Classify(ip, bytes, images_.Read(ip, bytes, sizeof bytes), mode);
}

std::string InsnClassifier::Describe(uint64_t ip, ExecMode mode) const {
  uint8_t bytes[16];
  size_t size = images_.Read(ip, bytes, sizeof bytes);
  if (size == 0) return {};
  auto text = decoder_.Decode(ip, bytes, size, mode);
  if (!text) return {};
  std::string out = text->mnemonic;
  for (size_t i = 0; i < text->operands.size(); ++i)
    out += (i ? ", " : " ") + text->operands[i].text;
  return out;
}

}  // namespace ptprof::patterns
