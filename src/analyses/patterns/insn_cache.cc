#include "src/analyses/patterns/insn_cache.h"

namespace ptprof::patterns {

void InsnCache::Grow() {
  ZeroedArray<Slot> old = std::move(slots_);
  slots_ = ZeroedArray<Slot>(old.size() * 2);
  for (const Slot& slot : old)
    if (slot.mode) SlotOf(slot.ip, slot.mode) = slot;
}

CachedInsn InsnCache::At(uint64_t ip, ExecMode mode) {
  const uint8_t key = static_cast<uint8_t>(static_cast<uint8_t>(mode) + 1);
  Slot* slot = &SlotOf(ip, key);
  if (slot->mode) return CachedInsn{slot->length, slot->atoms};
  if ((used_ + 1) * 4 > slots_.size() * 3) {
    Grow();
    slot = &SlotOf(ip, key);
  }
  ++used_;
  slot->ip = ip;
  slot->mode = key;
  ++decoded_;
  uint8_t bytes[16];
  size_t size = images_.Read(ip, bytes, sizeof bytes);
  if (size == 0) return {};
  // Kernel-only patterns on user code, or a mnemonic no pattern names: the length is all we need.
  uint64_t candidates = matcher_.CandidatesAt(IsKernelAddress(ip, mode));
  if (auto quick = decoder_.QuickX86(bytes, size, mode)) {
    auto [known, fresh] = candidates_.try_emplace(quick->mnemonic);
    if (fresh) known->second = matcher_.CandidatesFor(quick->mnemonic);
    candidates &= known->second;
    if (!candidates) {
      slot->length = quick->length;
      return CachedInsn{slot->length, 0};
    }
  }
  ++disassembled_;
  auto text = decoder_.Decode(ip, bytes, size, mode);
  if (!text) return {};
  slot->length = text->length;
  slot->atoms = matcher_.AtomsOf(*text, candidates);
  return CachedInsn{slot->length, slot->atoms};
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
