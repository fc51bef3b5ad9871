#pragma once
// PatternMatcher answers "which of these patterns end at this instruction?" while instructions
// stream past, one stream at a time. Every distinct element of the patterns becomes an "atom",
// one bit of a 64-bit mask; an instruction is matched against the atoms once (InsnCache keeps the
// mask per address), after which stepping the sequences costs a few bit tests per instruction,
// and a run of instructions without atoms costs one call (Skip).
#include <cstdint>
#include <vector>

#include "src/analyses/patterns/insn_text.h"
#include "src/analyses/patterns/pattern.h"
#include "src/model/result.h"

namespace ptprof::patterns {

class PatternMatcher {
 public:
  // At most 64 distinct elements over all `patterns` (an error says so).
  static Result<PatternMatcher> Compile(const std::vector<Pattern>& patterns);

  // The atoms `insn` matches (among `candidates`).
  uint64_t AtomsOf(const InsnText& insn, uint64_t candidates = ~uint64_t{0}) const;

  // The atoms an instruction with this mnemonic may match: those whose mnemonic glob matches it,
  // and every byte pattern. Zero means the instruction's operands need not be looked at.
  uint64_t CandidatesFor(std::string_view mnemonic) const;
  // The atoms an instruction at a kernel (or user) address may match.
  uint64_t CandidatesAt(bool kernel) const { return kernel ? kernel_atoms_ : user_atoms_; }

  // The sequences in progress in one stream.
  struct State {
    struct Partial {
      uint16_t alternative;
      uint16_t next_step;
      uint32_t between;  // instructions since the last matched step
    };
    std::vector<std::vector<Partial>> partials;  // per pattern
    std::vector<Partial> scratch;                // reused by Step, so that it does not allocate
    bool Idle() const {  // (inline: asked after every block with an atom)
      for (const auto& p : partials)
        if (!p.empty()) return false;
      return true;
    }
  };
  State NewState() const;

  // One instruction with atom mask `atoms`. For each pattern, `matched_alternative[p]` is set to
  // the first alternative (in definition order) that ends here, or -1. Returns whether any did.
  bool Step(State& state, uint64_t atoms, std::vector<int>& matched_alternative) const;

  // `count` instructions that match no atom.
  void Skip(State& state, uint64_t count) const;

  // Forgets the sequences in progress (the flow was interrupted).
  void Reset(State& state) const;

  // How many instructions a sequence in progress can go on at most before it ends, matched or
  // not: after that many more instructions a state holds only sequences that began in them,
  // whatever it held before (sequences evolve each on its own; keeping one of two at the same
  // step loses nothing). The longest alternative's steps after the first, each with the
  // instructions allowed before it.
  uint64_t Horizon() const;

  size_t pattern_count() const { return patterns_.size(); }
  size_t atom_count() const { return atoms_.size(); }

 private:
  struct AtomStep {
    uint8_t atom;
    uint32_t max_between;
  };
  struct CompiledPattern {
    std::vector<std::vector<AtomStep>> alternatives;
    uint64_t first_atoms = 0;  // atoms that start some alternative
    uint64_t longer_first_atoms = 0;  // those that start an alternative of two steps or more
  };
  std::vector<ElementPattern> atoms_;
  uint64_t kernel_atoms_ = 0, user_atoms_ = 0;
  std::vector<CompiledPattern> patterns_;
};

}  // namespace ptprof::patterns
