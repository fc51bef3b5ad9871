#pragma once
// BlockExpander answers "which instructions of this ExecBlock match a pattern atom, and where?":
// it walks the block's instructions through the per-address InsnCache once per distinct block
// (first IP, instruction count, mode) and keeps only the instructions with atoms, so that a block
// seen again costs one lookup however long it is.
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "src/analyses/patterns/insn_cache.h"
#include "src/model/trace_event.h"

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
};

class BlockExpander {
 public:
  explicit BlockExpander(patterns::InsnCache& cache) : cache_(cache) {}

  const ExpandedBlock& Expand(const ExecBlock& block);

 private:
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
  patterns::InsnCache& cache_;
  std::unordered_map<Key, ExpandedBlock, KeyHash> blocks_;
};

}  // namespace ptprof::delta
