#include "src/analyses/delta/block_expander.h"

namespace ptprof::delta {

const ExpandedBlock& BlockExpander::Expand(const ExecBlock& block) {
  auto [it, inserted] = blocks_.try_emplace(Key{block.first_ip, block.insns, block.mode});
  if (!inserted) return it->second;
  ExpandedBlock& expanded = it->second;
  uint64_t ip = block.first_ip;
  for (uint32_t i = 0; i < block.insns; ++i) {
    const patterns::CachedInsn& insn = cache_.At(ip, block.mode);
    if (insn.length == 0) break;
    if (insn.atoms) expanded.hits.push_back({i, ip, insn.atoms});
    expanded.expanded = i + 1;
    ip += insn.length;
  }
  return expanded;
}

}  // namespace ptprof::delta
