#pragma once
// BlockExpander answers "which instructions of this ExecBlock match a pattern atom, and where?":
// it classifies the block's instructions (InsnClassifier) once per distinct block (first IP,
// instruction count, mode), reading its code from the images a window at a time, and keeps only
// the instructions with atoms, so that a block seen again costs one lookup however long it is.
#include <cstdint>
#include <deque>
#include <span>
#include <utility>
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

// What stepping an idle pattern matcher through a whole block does.
enum class IdleOutcome : int8_t {
  kUnknown = -1,  // not worked out yet
  kUnsettled,     // a sequence is left in progress, or some of the block's code was not found
  kQuiet,         // nothing: no match, and the matcher is left idle
  kSettled,       // the matches in ExpandedBlock::idle_matches, and the matcher is left idle
};

// A match a block makes when stepped from an idle matcher: at hits[hit], the alternatives of the
// (first two) patterns that matched there, or -1.
struct IdleMatch {
  uint32_t hit;
  int32_t matched[2];
};

struct ExpandedBlock {
  std::vector<BlockHit> hits;  // in order
  // Instructions whose code was found and decoded, from the start of the block; fewer than the
  // block's count when the walk met an address without code or with undecodable bytes.
  uint32_t expanded = 0;
  // For its user (DeltaProfiler), worked out on first need: what the block does to an idle
  // matcher, and, when that is kSettled, the matches it makes (then none of its matching depends
  // on what came before, and it need not be stepped again).
  mutable IdleOutcome idle = IdleOutcome::kUnknown;
  mutable std::vector<IdleMatch> idle_matches;
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

  // A block as looked up, with what most lookups need to know kept beside its key, so that they
  // need not touch the block itself (a cache miss when blocks are many).
  struct Seen {
    uint64_t ip = 0;
    uint32_t insns = 0;
    ExecMode mode = ExecMode::kUnknown;
    bool plain = false;  // no instruction with an atom, every instruction found
    IdleOutcome idle = IdleOutcome::kUnknown;  // a copy of block->idle as last known here
    // With idle kSettled: its one idle match is the one below (a block that ends in a call or a
    // return, on a frequent pair), so that making it needs no load of the block, its matches
    // and its hits. Else they are in block->idle_matches.
    bool one_match = false;
    const ExpandedBlock* block = nullptr;  // null: an empty slot; in a deque: stays put
    uint32_t match_offset = 0;  // its IP less the block's first IP
    uint16_t match_index = 0;   // its instruction's index in the block
    int8_t matched[2] = {-1, -1};

    // Keeps block->idle here, with its one match when it has one that fits.
    void Settle();
    // The matches an idle matcher makes in the block, kSettled: on_match(ip, index, first,
    // second), the alternatives of the two patterns that matched there, or -1.
    template <typename OnMatch>
    void EachIdleMatch(OnMatch&& on_match) const {
      if (one_match) return on_match(ip + match_offset, match_index, matched[0], matched[1]);
      for (const IdleMatch& match : block->idle_matches) {
        const BlockHit& hit = block->hits[match.hit];
        on_match(hit.ip, hit.index, match.matched[0], match.matched[1]);
      }
    }
  };
  static_assert(sizeof(Seen) == 32);

  const ExpandedBlock& Expand(const ExecBlock& block) {
    return *Find(block.first_ip, block.insns, block.mode).block;
  }
  // The block's entry (its ExpandedBlock made on the first lookup). The entry stays valid until
  // the next lookup only; the block itself for the expander's lifetime.
  Seen& Find(uint64_t first_ip, uint32_t insns, ExecMode mode) {
    // Every block has its entry in one open-addressed table, found from its home slot on: one
    // cache miss, where a direct-mapped front with a node-based map behind it took two or three
    // each time the front had lost the block (on cc1's 122 K blocks, one lookup in 25).
    const size_t home = Home(first_ip, insns, mode);
    for (size_t i = home;; i = (i + 1) & mask_) {
      Seen& slot = table_[i];
      if (!slot.block) return Add(slot, first_ip, insns, mode);
      if (slot.ip == first_ip && slot.insns == insns && slot.mode == mode)
        return i == home ? slot : Displaced(slot, table_[home]);
    }
  }
  size_t table_slots() const { return table_.size(); }

 private:
  // A block found past its home slot, where it costs a probe more (and often a mispredicted
  // branch) each time. Every eighth such lookup it swaps places with the entry in its home slot,
  // so that the blocks looked up most come to sit at home: on sort, 31 % of the lookups found
  // their block past its home, most of them hot blocks behind blocks that ran once at start-up.
  // The entry it displaces stays findable, as the table never removes an entry: its own home
  // and every slot on to the one it moves to are taken. Eight, so that two hot blocks of one
  // home do not swap on every lookup.
  Seen& Displaced(Seen& found, Seen& home) {
    if ((++displaced_ & 7) != 0) return found;
    std::swap(found, home);
    return home;
  }
  // Classifies the block (Walk) into a new entry at `empty`, the table grown first when full.
  [[gnu::noinline]] Seen& Add(Seen& empty, uint64_t first_ip, uint32_t insns, ExecMode mode);
  void Walk(ExpandedBlock& expanded, uint64_t first_ip, uint32_t insns, ExecMode mode);
  // The table doubled, its entries placed again.
  void Grow();
  // The first empty slot from the block's home slot on (one that is not in the table).
  Seen& EmptySlot(uint64_t first_ip, uint32_t insns, ExecMode mode);
  size_t Home(uint64_t first_ip, uint32_t insns, ExecMode mode) const {
    const uint64_t key = first_ip ^ (uint64_t{insns} << 40) ^ (static_cast<uint64_t>(mode) << 60);
    return static_cast<size_t>((key * 0x9e3779b97f4a7c15ull) >> shift_);
  }
  // At most half full. It starts at 512 KiB and doubles: zeroed (an empty slot has no block),
  // not value-initialised, so that 2 MiB and more come in huge pages, not 4 KiB faults
  // (src/model/zeroed_array.h).
  static constexpr unsigned kFirstSlotBits = 14;
  ZeroedArray<Seen> table_ = ZeroedArray<Seen>(size_t{1} << kFirstSlotBits);
  size_t mask_ = (size_t{1} << kFirstSlotBits) - 1;
  unsigned shift_ = 64 - kFirstSlotBits;
  patterns::InsnClassifier& classifier_;
  std::deque<ExpandedBlock> blocks_;
  uint32_t displaced_ = 0;  // lookups that found their block past its home slot
};

}  // namespace ptprof::delta
