#include "src/analyses/delta/block_expander.h"

namespace ptprof::delta {

const ExpandedBlock& BlockExpander::Walk(uint64_t first_ip, uint32_t insns, ExecMode mode) {
  auto [it, inserted] = blocks_.try_emplace(Key{first_ip, insns, mode});
  if (!inserted) return it->second;
  if (blocks_.size() > front_.size() / 2 && front_.size() < kMaxFrontSlots) {
    front_ = ZeroedArray<Seen>(front_.size() * 2);
    front_mask_ = front_.size() - 1;
  }
  ExpandedBlock& expanded = it->second;
  // The code from window_ip on, as the images hold it (a read stops where its image's visible
  // range ends, so an instruction sees the bytes a read at its own address would give).
  uint8_t window[256];
  uint64_t window_ip = first_ip;
  size_t held = classifier_.images().Read(first_ip, window, sizeof window);
  uint64_t ip = first_ip;
  for (uint32_t i = 0; i < insns; ++i) {
    if (held - (ip - window_ip) < 16 && ip != window_ip) {
      window_ip = ip;
      held = classifier_.images().Read(ip, window, sizeof window);
    }
    const size_t at = static_cast<size_t>(ip - window_ip);
    const patterns::ClassifiedInsn insn = classifier_.Classify(ip, window + at, held - at, mode);
    if (insn.length == 0) break;
    if (insn.atoms) expanded.hits.push_back({i, ip, insn.atoms});
    expanded.expanded = i + 1;
    ip += insn.length;
  }
  return expanded;
}

}  // namespace ptprof::delta
