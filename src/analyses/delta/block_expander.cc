#include "src/analyses/delta/block_expander.h"

namespace ptprof::delta {

BlockExpander::Seen& BlockExpander::Add(Seen& empty, uint64_t first_ip, uint32_t insns,
                                        ExecMode mode) {
  ExpandedBlock& expanded = blocks_.emplace_back();
  Walk(expanded, first_ip, insns, mode);
  Seen* slot = &empty;
  if (blocks_.size() * 2 > table_.size()) {
    Grow();
    slot = &EmptySlot(first_ip, insns, mode);
  }
  *slot = Seen{};
  slot->ip = first_ip;
  slot->insns = insns;
  slot->mode = mode;
  slot->plain = expanded.hits.empty() && expanded.expanded == insns;
  slot->block = &expanded;
  slot->Settle();
  return *slot;
}

void BlockExpander::Seen::Settle() {
  idle = block->idle;
  one_match = false;
  if (idle != IdleOutcome::kSettled || block->idle_matches.size() != 1) return;
  const IdleMatch& match = block->idle_matches.front();
  const BlockHit& hit = block->hits[match.hit];
  auto fits = [](int32_t alternative) { return alternative >= -1 && alternative <= INT8_MAX; };
  if (hit.ip - ip > UINT32_MAX || hit.index > UINT16_MAX || !fits(match.matched[0]) ||
      !fits(match.matched[1]))
    return;
  match_offset = static_cast<uint32_t>(hit.ip - ip);
  match_index = static_cast<uint16_t>(hit.index);
  matched[0] = static_cast<int8_t>(match.matched[0]);
  matched[1] = static_cast<int8_t>(match.matched[1]);
  one_match = true;
}

void BlockExpander::Grow() {
  ZeroedArray<Seen> old = std::move(table_);
  table_ = ZeroedArray<Seen>(old.size() * 2, Pages::kFaultedIn);
  mask_ = table_.size() - 1;
  --shift_;
  for (const Seen& entry : old)
    if (entry.block) EmptySlot(entry.ip, entry.insns, entry.mode) = entry;
}

BlockExpander::Seen& BlockExpander::EmptySlot(uint64_t first_ip, uint32_t insns, ExecMode mode) {
  size_t i = Home(first_ip, insns, mode);
  while (table_[i].block) i = (i + 1) & mask_;
  return table_[i];
}

void BlockExpander::Walk(ExpandedBlock& expanded, uint64_t first_ip, uint32_t insns,
                         ExecMode mode) {
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
}

}  // namespace ptprof::delta
