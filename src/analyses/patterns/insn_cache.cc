#include "src/analyses/patterns/insn_cache.h"

namespace ptprof::patterns {

const CachedInsn& InsnCache::At(uint64_t ip, ExecMode mode) {
  auto& cache = by_mode_[static_cast<size_t>(mode) % by_mode_.size()];
  auto [it, inserted] = cache.try_emplace(ip);
  if (!inserted) return it->second;
  ++decoded_;
  uint8_t bytes[16];
  size_t size = images_.Read(ip, bytes, sizeof bytes);
  if (size == 0) return it->second;
  // Kernel-only patterns on user code, or a mnemonic no pattern names: the length is all we need.
  uint64_t candidates = matcher_.CandidatesAt(IsKernelAddress(ip, mode));
  if (auto quick = decoder_.QuickX86(bytes, size, mode)) {
    auto [known, fresh] = candidates_.try_emplace(quick->mnemonic);
    if (fresh) known->second = matcher_.CandidatesFor(quick->mnemonic);
    candidates &= known->second;
    if (!candidates) {
      it->second.length = quick->length;
      return it->second;
    }
  }
  ++disassembled_;
  auto text = decoder_.Decode(ip, bytes, size, mode);
  if (!text) return it->second;
  it->second.length = text->length;
  it->second.atoms = matcher_.AtomsOf(*text, candidates);
  return it->second;
}

std::string InsnCache::Describe(uint64_t ip, ExecMode mode) const {
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
