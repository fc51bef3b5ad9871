#pragma once
// RunMemo answers "what does this run of blocks do to an idle pattern matcher?" once per run.
// A batch may say that a stretch of its blocks is a run (BlockBatch::runs): the same blocks,
// from memory that does not change, every time that run comes (the fast engine's TNT runs,
// 5 to 7 blocks each on the recordings of tools/bench). What stepping an idle matcher through
// them does depends on those blocks alone: nothing, or matches at known places that leave it
// idle, or something that needs the blocks stepped through (a sequence left in progress, code
// not found). So the delta profiler works it out the first time, block by block, and after that
// takes the run's instructions in one step and makes only its matches, instead of looking up
// each of its blocks.
#include <cstdint>
#include <span>
#include <vector>

#include "src/model/block_batch.h"
#include "src/model/trace_event.h"
#include "src/model/zeroed_array.h"

namespace ptprof::delta {

// A match an idle matcher makes in a run.
struct RunMatch {
  uint32_t block = 0;     // the run's block it is in (0-based)
  uint32_t position = 0;  // the run's instructions before it (its index in the run)
  uint64_t ip = 0;
  ExecMode mode = ExecMode::kUnknown;
  int32_t matched[2] = {-1, -1};  // the alternatives of the two patterns that matched, or -1
};

class RunMemo {
 public:
  struct Outcome {
    // The run leaves an idle matcher idle, with `matches` on the way; false: its blocks must be
    // stepped through one by one.
    bool settled = false;
    uint64_t insns = 0;
    std::span<const RunMatch> matches;
  };

  // The outcome of `run` (of `source`'s runs), worked out the first time by `block_matches(b,
  // before, out)` for each of its blocks b (the batch's copies), `before` the run's
  // instructions before it: false when the block leaves a sequence in progress or lacks code
  // (the run is then not settled), else true with its matches added to `out`.
  // The run's note (BatchRun::note), when it has one and it is this memo's for this count,
  // holds the outcome: then the table is not looked at.
  template <typename BlockMatches>
  Outcome Find(uint64_t source, const BatchRun& run, const BlockMatches& block_matches) {
    Outcome noted;
    if (Noted(run, noted)) return noted;
    Entry* entry = &Slot(source, run);
    if (entry->state == State::kEmpty) {
      if ((used_ + 1) * 2 > table_.size()) {
        Grow();
        entry = &Slot(source, run);
      }
      Fill(*entry, source, run, block_matches);
      ++used_;
    }
    if (RunNote* note = run.note; note && run.count <= UINT8_MAX && entry->insns <= UINT32_MAX &&
        entry->end - entry->begin <= UINT16_MAX) {
      note->owner = id_;
      note->count = static_cast<uint8_t>(run.count);
      note->flags = entry->state == State::kSettled ? 1 : 0;
      note->items = static_cast<uint16_t>(entry->end - entry->begin);
      note->first = entry->begin;
      note->value = static_cast<uint32_t>(entry->insns);
    }
    return {entry->state == State::kSettled, entry->insns,
            std::span<const RunMatch>(matches_).subspan(entry->begin, entry->end - entry->begin)};
  }

  // Find's first step, short enough to inline where runs are taken: the outcome from the run's
  // note, when the note is this memo's for this count.
  bool Noted(const BatchRun& run, Outcome& out) const {
    const RunNote* note = run.note;
    if (!note || note->owner != id_ || note->count != run.count) return false;
    out = {note->flags != 0, note->value,
           std::span<const RunMatch>(matches_.data() + note->first, note->items)};
    return true;
  }

  size_t runs() const { return used_; }

  RunMemo();

 private:
  enum class State : uint8_t { kEmpty, kUnsettled, kSettled };
  struct Entry {
    uint64_t source = 0;
    const void* run = nullptr;
    uint64_t insns = 0;
    uint32_t count = 0;
    State state = State::kEmpty;
    uint32_t begin = 0, end = 0;  // its matches in matches_
  };

  template <typename BlockMatches>
  void Fill(Entry& entry, uint64_t source, const BatchRun& run, const BlockMatches& block_matches) {
    entry.source = source;
    entry.run = run.run;
    entry.count = run.count;
    entry.begin = static_cast<uint32_t>(matches_.size());
    uint64_t insns = 0;
    bool settled = true;
    for (uint32_t b = 0; b < run.count && settled; ++b) {
      const size_t before = matches_.size();
      settled = block_matches(run.at[b], insns, matches_);
      for (size_t m = before; m < matches_.size(); ++m) matches_[m].block = b;
      insns += run.at[b].insns;
    }
    if (!settled || insns > UINT32_MAX) {
      matches_.resize(entry.begin);
      settled = false;
    }
    entry.state = settled ? State::kSettled : State::kUnsettled;
    entry.insns = insns;
    entry.end = static_cast<uint32_t>(matches_.size());
  }
  // The run's entry, or the empty slot where it goes.
  Entry& Slot(uint64_t source, const BatchRun& run) {
    const size_t mask = table_.size() - 1;
    for (size_t i = Home(source, run.run, run.count, shift_);; i = (i + 1) & mask) {
      Entry& entry = table_[i];
      if (entry.state == State::kEmpty ||
          (entry.run == run.run && entry.count == run.count && entry.source == source))
        return entry;
    }
  }
  static size_t Home(uint64_t source, const void* run, uint32_t count, unsigned shift) {
    uint64_t key = reinterpret_cast<uintptr_t>(run) ^ (uint64_t{count} << 52) ^
                   (source * 0xff51afd7ed558ccdull);
    key ^= key >> 29;
    return static_cast<size_t>((key * 0x9e3779b97f4a7c15ull) >> shift);
  }
  void Grow();

  // Names this memo on the runs' notes: never 0, never another memo's (32 bits: four billion
  // memos in one process).
  const uint32_t id_;
  // Zero bytes are an empty entry (State::kEmpty): the table grows in memory the kernel zeroes
  // (src/model/zeroed_array.h), where a std::vector would write every byte of it first.
  ZeroedArray<Entry> table_ = ZeroedArray<Entry>(size_t{1} << 10);
  unsigned shift_ = 64 - 10;
  size_t used_ = 0;
  std::vector<RunMatch> matches_;
};

}  // namespace ptprof::delta
