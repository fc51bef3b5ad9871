#include "src/analyses/delta/block_expander.h"

namespace ptprof::delta {

const ExpandedBlock& BlockExpander::Walk(uint64_t first_ip, uint32_t insns, ExecMode mode) {
  auto [it, inserted] = blocks_.try_emplace(Key{first_ip, insns, mode});
  if (!inserted) return it->second;
  ExpandedBlock& expanded = it->second;
  uint64_t ip = first_ip;
  for (uint32_t i = 0; i < insns; ++i) {
    const patterns::CachedInsn insn = cache_.At(ip, mode);
    if (insn.length == 0) break;
    if (insn.atoms) expanded.hits.push_back({i, ip, insn.atoms});
    expanded.expanded = i + 1;
    ip += insn.length;
  }
  return expanded;
}

}  // namespace ptprof::delta
