#include "src/analyses/patterns/pattern_matcher.h"

#include <algorithm>

namespace ptprof::patterns {

namespace {

// Two elements are one atom when they are written alike (after parsing: same text).
std::string AtomKey(const ElementPattern& element) {
  return std::to_string(static_cast<int>(element.privilege)) + "|" + element.text;
}

}  // namespace

Result<PatternMatcher> PatternMatcher::Compile(const std::vector<Pattern>& patterns) {
  PatternMatcher matcher;
  std::vector<std::string> keys;
  for (const Pattern& pattern : patterns) {
    CompiledPattern compiled;
    for (const Alternative& alternative : pattern.alternatives) {
      std::vector<AtomStep> steps;
      for (const SequenceStep& step : alternative.steps) {
        std::string key = AtomKey(step.element);
        auto it = std::find(keys.begin(), keys.end(), key);
        size_t atom = static_cast<size_t>(it - keys.begin());
        if (it == keys.end()) {
          if (keys.size() == 64)
            return Fail("pattern " + pattern.name +
                        ": the patterns in use have more than 64 distinct instructions");
          keys.push_back(key);
          matcher.atoms_.push_back(step.element);
        }
        steps.push_back({static_cast<uint8_t>(atom), step.max_between});
      }
      if (steps.size() > 0xffff || pattern.alternatives.size() > 0xffff)
        return Fail("pattern " + pattern.name + ": too long");
      compiled.first_atoms |= uint64_t{1} << steps.front().atom;
      if (steps.size() > 1) compiled.longer_first_atoms |= uint64_t{1} << steps.front().atom;
      compiled.alternatives.push_back(std::move(steps));
    }
    matcher.patterns_.push_back(std::move(compiled));
  }
  for (size_t i = 0; i < matcher.atoms_.size(); ++i) {
    Privilege privilege = matcher.atoms_[i].privilege;
    if (privilege != Privilege::kUser) matcher.kernel_atoms_ |= uint64_t{1} << i;
    if (privilege != Privilege::kKernel) matcher.user_atoms_ |= uint64_t{1} << i;
  }
  return matcher;
}

uint64_t PatternMatcher::AtomsOf(const InsnText& insn, uint64_t candidates) const {
  uint64_t atoms = 0;
  for (size_t i = 0; i < atoms_.size(); ++i)
    if ((candidates >> i & 1) && atoms_[i].Matches(insn)) atoms |= uint64_t{1} << i;
  return atoms;
}

uint64_t PatternMatcher::CandidatesFor(std::string_view mnemonic) const {
  uint64_t atoms = 0;
  for (size_t i = 0; i < atoms_.size(); ++i)
    if (!atoms_[i].bytes.empty() || GlobMatches(atoms_[i].mnemonic, mnemonic))
      atoms |= uint64_t{1} << i;
  return atoms;
}

PatternMatcher::State PatternMatcher::NewState() const {
  State state;
  state.partials.resize(patterns_.size());
  return state;
}

bool PatternMatcher::Step(State& state, uint64_t atoms, std::vector<int>& matched) const {
  matched.resize(patterns_.size());  // each one written below
  bool any = false;
  for (size_t p = 0; p < patterns_.size(); ++p) {
    const CompiledPattern& pattern = patterns_[p];
    auto& partials = state.partials[p];
    if (partials.empty()) {
      if (!(atoms & pattern.first_atoms)) {
        matched[p] = -1;
        continue;
      }
      if (!(atoms & pattern.longer_first_atoms)) {
        // Nothing in progress and only alternatives of one instruction begin here: the first of
        // them matches, and nothing is left in progress (as the general steps below find).
        size_t a = 0;
        while (!(pattern.alternatives[a].size() == 1 &&
                 (atoms >> pattern.alternatives[a].front().atom & 1)))
          ++a;
        matched[p] = static_cast<int>(a);
        any = true;
        continue;
      }
    }
    int best = -1;
    auto credit = [&best](int alternative) {
      if (best < 0 || alternative < best) best = alternative;
    };
    // Advance the sequences in progress; the unadvanced copy stays too (a later instruction may
    // serve it as well), unless the gap before its next step is used up.
    std::vector<State::Partial>& next = state.scratch;
    next.clear();
    for (const State::Partial& partial : partials) {
      const auto& steps = pattern.alternatives[partial.alternative];
      const AtomStep& step = steps[partial.next_step];
      if (atoms >> step.atom & 1) {
        if (partial.next_step + 1u == steps.size())
          credit(partial.alternative);
        else
          next.push_back({partial.alternative, static_cast<uint16_t>(partial.next_step + 1), 0});
      }
      if (partial.between + 1 <= step.max_between)
        next.push_back({partial.alternative, partial.next_step, partial.between + 1});
    }
    if (atoms & pattern.first_atoms) {
      for (size_t a = 0; a < pattern.alternatives.size(); ++a) {
        const auto& steps = pattern.alternatives[a];
        if (!(atoms >> steps.front().atom & 1)) continue;
        if (steps.size() == 1)
          credit(static_cast<int>(a));
        else
          next.push_back({static_cast<uint16_t>(a), 1, 0});
      }
    }
    // One partial per (alternative, step): the one with the most room left.
    if (next.size() > 1) {
      std::sort(next.begin(), next.end(), [](const State::Partial& x, const State::Partial& y) {
        if (x.alternative != y.alternative) return x.alternative < y.alternative;
        if (x.next_step != y.next_step) return x.next_step < y.next_step;
        return x.between < y.between;
      });
      next.erase(std::unique(next.begin(), next.end(),
                             [](const State::Partial& x, const State::Partial& y) {
                               return x.alternative == y.alternative && x.next_step == y.next_step;
                             }),
                 next.end());
    }
    partials.swap(next);
    matched[p] = best;
    any |= best >= 0;
  }
  return any;
}

void PatternMatcher::Skip(State& state, uint64_t count) const {
  for (size_t p = 0; p < patterns_.size(); ++p) {
    auto& partials = state.partials[p];
    if (partials.empty()) continue;
    std::erase_if(partials, [&](State::Partial& partial) {
      const AtomStep& step = patterns_[p].alternatives[partial.alternative][partial.next_step];
      if (partial.between + count > step.max_between) return true;
      partial.between += static_cast<uint32_t>(count);
      return false;
    });
  }
}

uint64_t PatternMatcher::Horizon() const {
  uint64_t horizon = 0;
  for (const CompiledPattern& pattern : patterns_)
    for (const std::vector<AtomStep>& steps : pattern.alternatives) {
      uint64_t length = 0;
      for (size_t i = 1; i < steps.size(); ++i) length += uint64_t{steps[i].max_between} + 1;
      horizon = std::max(horizon, length);
    }
  return horizon;
}

void PatternMatcher::Reset(State& state) const {
  for (auto& p : state.partials) p.clear();
}

}  // namespace ptprof::patterns
