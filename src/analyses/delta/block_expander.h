#pragma once
// BlockExpander answers "which instructions of this ExecBlock match a pattern atom, and where?":
// it classifies the block's instructions (InsnClassifier) once per distinct block (first IP,
// instruction count, mode), reading its code from the images a window at a time, and keeps only
// the instructions with atoms, so that a block seen again costs one lookup however long it is.
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "src/analyses/patterns/insn_classifier.h"
#include "src/analyses/patterns/pattern_matcher.h"
#include "src/model/trace_event.h"
#include "src/model/zeroed_array.h"

namespace ptprof::delta {

struct BlockHit {
  uint32_t index;  // position in the block, 0-based
  uint64_t ip;
  uint64_t atoms;
};

struct ExpandedBlock {
  std::vector<BlockHit> hits;  // in order
  // Instructions whose code was found and decoded, from the start of the block; fewer than the
  // block's count when the walk met an address without code or with undecodable bytes.
  uint32_t expanded = 0;
  // For its user (DeltaProfiler): whether the block leaves an idle pattern matcher idle without
  // a match (-1: not known yet).
  mutable int8_t quiet = -1;
};

// Steps `state` through the first `expanded` instructions of a block: its `hits` (in order), the
// others skipped. `on_match(hit)` for every hit at which a pattern matched (`matched` says which).
template <typename OnMatch>
void StepThroughBlock(const patterns::PatternMatcher& matcher,
                      patterns::PatternMatcher::State& state, std::span<const BlockHit> hits,
                      uint32_t expanded, std::vector<int>& matched, OnMatch&& on_match) {
  uint32_t done = 0;
  for (const BlockHit& hit : hits) {
    if (hit.index > done) matcher.Skip(state, hit.index - done);
    if (matcher.Step(state, hit.atoms, matched)) on_match(hit);
    done = hit.index + 1;
  }
  if (expanded > done) matcher.Skip(state, expanded - done);
}

class BlockExpander {
 public:
  explicit BlockExpander(patterns::InsnClassifier& classifier) : classifier_(classifier) {}

  // A block as last looked up, with what most lookups need to know kept beside its key, so that
  // they need not touch the block itself (a cache miss when blocks are many).
  struct Seen {
    uint64_t ip = 0;
    uint32_t insns = 0;
    ExecMode mode = ExecMode::kUnknown;
    bool plain = false;  // no instruction with an atom, every instruction found
    int8_t quiet = -1;   // a copy of block->quiet as it was when last known here
    const ExpandedBlock* block = nullptr;  // node-based map: stays put
  };

  const ExpandedBlock& Expand(const ExecBlock& block) {
    return *Find(block.first_ip, block.insns, block.mode).block;
  }
  // The block's entry (its ExpandedBlock made on the first lookup). The entry stays valid until
  // the next lookup only; the block itself for the expander's lifetime.
  Seen& Find(uint64_t first_ip, uint32_t insns, ExecMode mode) {
    // Most blocks were seen a moment ago: a direct-mapped slot answers before the map.
    const uint64_t hash = first_ip * 0x9e3779b97f4a7c15ull ^ (uint64_t{insns} << 8) ^
                          static_cast<uint64_t>(mode);
    Seen* slot = &front_[(hash >> 40) & front_mask_];
    if (slot->block && slot->ip == first_ip && slot->insns == insns && slot->mode == mode)
      return *slot;
    const ExpandedBlock& expanded = Walk(first_ip, insns, mode);  // may grow the front
    slot = &front_[(hash >> 40) & front_mask_];
    *slot = Seen{first_ip, insns, mode, expanded.hits.empty() && expanded.expanded == insns,
                 expanded.quiet, &expanded};
    return *slot;
  }
  size_t front_slots() const { return front_.size(); }

 private:
  const ExpandedBlock& Walk(uint64_t first_ip, uint32_t insns, ExecMode mode);
  // The front starts at 512 KiB and grows, emptied, while the distinct blocks outnumber half its
  // slots, up to 4 MiB: past that a lookup of cc1's 122 K blocks missed it one time in 25, and
  // each miss took a cache miss or two in the map (most of the delta profile's time of its own).
  static constexpr size_t kFrontSlots = size_t{1} << 14;
  static constexpr size_t kMaxFrontSlots = size_t{1} << 17;
  // Zeroed (an empty slot has no block), not value-initialised: 2 MiB and more come in huge
  // pages, not 4 KiB faults (src/model/zeroed_array.h).
  ZeroedArray<Seen> front_ = ZeroedArray<Seen>(kFrontSlots);
  size_t front_mask_ = kFrontSlots - 1;
  struct Key {
    uint64_t ip;
    uint32_t insns;
    ExecMode mode;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      return std::hash<uint64_t>()(k.ip * 0x9e3779b97f4a7c15ull ^ (uint64_t{k.insns} << 8) ^
                                   static_cast<uint64_t>(k.mode));
    }
  };
  patterns::InsnClassifier& classifier_;
  std::unordered_map<Key, ExpandedBlock, KeyHash> blocks_;
};

}  // namespace ptprof::delta
