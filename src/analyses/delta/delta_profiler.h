#pragma once
// DeltaProfiler answers "how long, in time and in instructions, are the intervals between an
// opening and a closing instruction pattern?" (Algorithm 1 of the hardware-assisted profiling
// paper, both modes at once). Per CPU, or per thread, an interval opens at a match of the opening
// pattern and closes at the next match of the closing one; an opener seen while an interval is
// open is counted as nested (the interval keeps its first opener); an interval that crosses a gap
// in the trace is dropped and counted. A match's position is its last instruction; its time is
// the time the decoder gives the block holding it. It also counts every match of both patterns,
// per alternative. A lane (a CPU, or a thread: LaneOf) is named by its CPU, or by its thread when
// the trace has no CPU or --per-thread is given; positions count the lane's instructions.
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "sideband/image_set.h"
#include "src/analyses/delta/block_expander.h"
#include "src/analyses/delta/run_memo.h"
#include "src/analyses/patterns/insn_classifier.h"
#include "src/analyses/patterns/pattern.h"
#include "src/analyses/patterns/pattern_matcher.h"
#include "src/model/event_clock.h"
#include "src/model/parted_sink.h"
#include "src/model/result.h"
#include "src/model/value_tally.h"

namespace ptprof::delta {

// One value per closed interval (instructions, or time): millions on a frequent pair, counted per
// distinct value (src/model/value_tally.h), with their sum in closing order.
using DeltaValues = ValueTally;

// One closed interval.
struct Interval {
  uint64_t id = 0;       // 1, 2, ... in the order the intervals closed
  int32_t cpu = kUnknownId;
  int32_t tid = kUnknownId;
  uint64_t open_ip = 0, close_ip = 0;
  uint64_t open_offset = 0, close_offset = 0;  // trace offsets of the blocks holding the matches
  uint64_t open_position = 0, close_position = 0;  // instruction index in the stream (0-based)
  std::optional<double> open_time, close_time;     // in the profile's time unit
  int open_alternative = 0, close_alternative = 0;
  uint32_t nested = 0;  // openers seen while it was open
  int32_t lane = kUnknownId;  // DeltaProfiler::LaneId of its events
  ExecMode mode = ExecMode::kUnknown;

  uint64_t instructions() const { return close_position - open_position; }
  std::optional<double> time() const {
    if (!open_time || !close_time) return std::nullopt;
    return *close_time - *open_time;
  }
};

struct DeltaCounts {
  uint64_t intervals = 0;
  uint64_t nested_openers = 0;
  uint64_t dropped_at_gap = 0;       // open when the trace had a gap
  uint64_t open_at_end = 0;          // still open when their stream ended
  uint64_t closers_without_opener = 0;
  uint64_t instructions = 0;         // executed, from the blocks' counts
  uint64_t unexpanded_instructions = 0;  // without code bytes: not matched against the patterns
  uint64_t gaps = 0;
  uint64_t intervals_without_time = 0;
  // Matches of the opening [0] and closing [1] pattern, per alternative.
  std::vector<uint64_t> matches[2];
};

// What a profile keeps of its intervals beside their counts.
struct IntervalKeeping {
  // Every closed interval, in intervals() (CSV rows; finding interval N). Without, a profile
  // holds the two values its histograms need (16 bytes an interval) and the longest ones.
  bool all = true;
  size_t longest = 10;  // Longest() at most
};

struct DeltaOptions {
  bool per_thread = false;
  IntervalKeeping keeping;
  // The time of an event in the profile's unit, when known (ns from the header's time, or the
  // TSC converted with the trace's frequency); without a clock, no interval has a time.
  EventClock clock;
};

class DeltaPart;

class DeltaProfiler : public PartedSink {
 public:
  // `open` and `close` may be the same pattern (then matches alternate: open, close, open, ...).
  static Result<std::unique_ptr<DeltaProfiler>> Create(const ImageSet& images,
                                                       const patterns::Pattern& open,
                                                       const patterns::Pattern& close,
                                                       DeltaOptions options);

  void OnEvent(const TraceEvent& event) override;
  // Blocks in bulk: a block with no instruction of either pattern only moves the lane on, and
  // one that an idle lane leaves idle makes its matches without the pattern matcher.
  void OnBlocks(const BlockBatch& batch) override;
  void OnEnd() override;

  // In parts (src/model/parted_sink.h): a part expands its blocks with its thread's own
  // instruction classifier and keeps, in stream order, only what the matching needs: the blocks with
  // an instruction of either pattern (or with code not found), how far each lane moved between
  // them, and the gaps (delta_part.h). Fold runs that through the lanes' matchers and intervals
  // exactly as the blocks themselves would have run, so the profile is the same however the
  // stream was cut.
  std::unique_ptr<EventSink> NewPart() const override;
  void Fold(std::unique_ptr<EventSink> part) override;

  // In closing order. A deque: a profile of a frequent pair holds millions, which grow in place
  // (no copy, no spare capacity of a doubled vector).
  const std::deque<Interval>& intervals() const { return intervals_; }  // empty unless kept
  bool keeps_intervals() const { return options_.keeping.all; }
  // Of the closed intervals: their instructions, and their times (those that have one).
  const DeltaValues& instruction_values() const { return instruction_values_; }
  const DeltaValues& time_values() const { return time_values_; }
  // The longest intervals (at most keeping.longest), longest first: by time when every interval
  // has one, else by instructions (then by instructions; equally long ones in closing order).
  std::vector<Interval> Longest() const;
  const DeltaCounts& counts() const { return counts_; }
  const patterns::Pattern& open_pattern() const { return open_; }
  const patterns::Pattern& close_pattern() const { return close_; }
  // Instructions classified (and disassembled: they may match an operand) so far, once per
  // distinct block, by this profiler and the threads' expansions its parts used.
  uint64_t decoded_instructions() const;
  uint64_t disassembled_instructions() const;

  // The lane an event belongs to: its CPU, or its thread (no CPU known, or per_thread).
  static int32_t LaneId(const EventHeader& header, bool per_thread) {
    return per_thread || header.cpu == kUnknownId ? header.tid : header.cpu;
  }

 private:
  DeltaProfiler(const ImageSet& images, patterns::Pattern open, patterns::Pattern close,
                patterns::PatternMatcher matcher, DeltaOptions options);

  struct Open {
    uint64_t ip = 0, offset = 0, position = 0;
    std::optional<double> time;
    int alternative = 0;
    uint32_t nested = 0;
    ExecMode mode = ExecMode::kUnknown;
  };
  struct Lane {  // one CPU or thread
    uint64_t position = 0;
    patterns::PatternMatcher::State match;
    std::optional<Open> open;
    int32_t cpu = kUnknownId, tid = kUnknownId;
  };

  friend class DeltaPart;
  // A thread's instruction classifier, block expander and run memo: the profile's own, and
  // those lent to the parts a thread feeds.
  struct Expansion {
    Expansion(const ImageSet& images, const patterns::PatternMatcher& matcher)
        : classifier(images, matcher), expander(classifier) {}
    // What an idle `matcher` makes of `run` (of the batch's `source`), worked out once (RunMemo)
    // as the blocks one by one would make it. The run's note is read here, inline where the run
    // is taken; the memo's table (WorkOutRun) only when the note is not the memo's.
    RunMemo::Outcome IdleRun(const patterns::PatternMatcher& matcher, uint64_t source,
                             const BatchRun& run, std::vector<int>& scratch) {
      RunMemo::Outcome noted;
      if (runs.Noted(run, noted)) return noted;
      return WorkOutRun(matcher, source, run, scratch);
    }
    RunMemo::Outcome WorkOutRun(const patterns::PatternMatcher& matcher, uint64_t source,
                                const BatchRun& run, std::vector<int>& scratch);
    patterns::InsnClassifier classifier;
    BlockExpander expander;
    RunMemo runs;
  };
  std::unique_ptr<Expansion> BorrowExpansion() const;
  // An empty profile of the same patterns, in which a part keeps the intervals it can close on
  // its own (delta_part.h).
  std::unique_ptr<DeltaProfiler> LocalProfile() const;
  void ReturnExpansion(std::unique_ptr<Expansion> expansion) const;

  Lane& LaneOf(const EventHeader& header);
  IdleOutcome OutcomeOf(BlockExpander::Seen& seen, uint32_t insns, bool idle) {
    return OutcomeOf(matcher_, seen, insns, idle, matched_);
  }
  // What the block does to a lane whose matcher is `idle` or not: kQuiet when its code holds no
  // pattern instruction; else, for an idle lane, IdleOutcomeOf; else kUnsettled (the block must
  // be stepped through). The one choice DeltaProfiler::OnBlocks and DeltaPart make per block.
  static IdleOutcome OutcomeOf(const patterns::PatternMatcher& matcher, BlockExpander::Seen& seen,
                               uint32_t insns, bool idle, std::vector<int>& scratch) {
    return seen.plain ? IdleOutcome::kQuiet
           : idle     ? IdleOutcomeOf(matcher, seen, insns, scratch)
                      : IdleOutcome::kUnsettled;
  }
  // What the block does to an idle matcher (ExpandedBlock::idle), kUnsettled also when some of
  // its code was not found: then an idle lane only moves on (kQuiet), or makes the block's
  // idle_matches and stays idle (kSettled). Worked out once per distinct block (WorkOutIdle),
  // kept on the block and in its expander slot.
  static IdleOutcome IdleOutcomeOf(const patterns::PatternMatcher& matcher,
                                   BlockExpander::Seen& seen, uint32_t insns,
                                   std::vector<int>& scratch) {
    if (seen.idle != IdleOutcome::kUnknown) return seen.idle;
    return WorkOutIdle(matcher, seen, insns, scratch);
  }
  [[gnu::noinline]] static IdleOutcome WorkOutIdle(const patterns::PatternMatcher& matcher,
                                                   BlockExpander::Seen& seen, uint32_t insns,
                                                   std::vector<int>& scratch);
  void OnBlock(const EventHeader& header, const ExecBlock& block);
  // The matching of a block of `insns` instructions whose first `expanded` were found, with
  // `hits` the ones with atoms (OnBlock's work once the block is expanded).
  void MatchBlock(Lane& lane, const EventHeader& header, uint32_t insns, ExecMode mode,
                  std::span<const BlockHit> hits, uint32_t expanded);
  // `insns` instructions without atoms, all found, in `lane`.
  void Advance(Lane& lane, uint64_t insns);
  void OnGap(const EventHeader& header);
  // A match at `ip`, where the opening pattern's alternative `first` and the closing one's
  // `second` matched (-1: not that pattern; the matcher's per-pattern answer).
  void OnMatch(Lane& lane, const EventHeader& header, uint64_t ip, uint64_t position,
               ExecMode mode, int first, int second);
  // The interval open in `lane` closes at a match of the closing pattern's alternative
  // `closer` (not inlined: it builds an Interval, which the other cases of OnMatch need not).
  [[gnu::noinline]] void Close(Lane& lane, const EventHeader& header, uint64_t ip,
                               uint64_t position, int closer);

  patterns::Pattern open_, close_;
  patterns::PatternMatcher matcher_;
  DeltaOptions options_;
  const ImageSet& images_;
  Expansion own_;
  mutable std::mutex spare_mutex_;
  mutable std::vector<std::pair<std::thread::id, std::unique_ptr<Expansion>>> spare_;
  std::map<int32_t, Lane> lanes_;
  int32_t last_key_ = 0;
  Lane* last_lane_ = nullptr;
  std::vector<int> matched_;  // per pattern, scratch
  bool same_pattern_ = false;
  std::deque<Interval> intervals_;
  DeltaValues instruction_values_, time_values_;
  // The longest intervals by time (while every interval has one) and by instructions: heaps
  // whose front is the shortest kept (KeepIfLongest).
  std::vector<Interval> longest_by_time_, longest_by_insns_;
  void KeepIfLongest(std::vector<Interval>& heap, const Interval& interval, bool by_time) const;
  // Whether an interval closed after every one in `heap`, of this time (by time) or these
  // instructions (by instructions), would be kept there: KeepIfLongest's test, made before the
  // interval is. Plain arguments: an optional passed by value is a byte stored and a word read
  // back, which stalls (store forwarding) on every interval of a frequent pair.
  bool MayBeLongestByTime(double time, uint64_t instructions) const {
    const std::vector<Interval>& heap = longest_by_time_;
    if (heap.size() < options_.keeping.longest) return options_.keeping.longest != 0;
    // A new interval closed last: it goes before the shortest kept only when it is longer.
    const Interval& shortest = heap.front();
    const double shortest_time = *shortest.time();
    if (time != shortest_time) return time > shortest_time;
    return instructions > shortest.instructions();
  }
  bool MayBeLongestByInsns(uint64_t instructions) const {
    const std::vector<Interval>& heap = longest_by_insns_;
    if (heap.size() < options_.keeping.longest) return options_.keeping.longest != 0;
    return instructions > heap.front().instructions();
  }
  DeltaCounts counts_;
};

// Inline: DeltaPart's parts call it for every match of a frequent pair (an interval at every
// call), from another file.
inline void DeltaProfiler::OnMatch(Lane& lane, const EventHeader& header, uint64_t ip,
                                   uint64_t position, ExecMode mode, int first, int second) {
  const int opener = first;
  const int closer = same_pattern_ ? first : second;
  if (opener >= 0) ++counts_.matches[0][static_cast<size_t>(opener)];
  if (closer >= 0 && !same_pattern_) ++counts_.matches[1][static_cast<size_t>(closer)];

  if (closer >= 0 && lane.open) return Close(lane, header, ip, position, closer);
  if (opener >= 0) {
    if (lane.open) {
      ++lane.open->nested;
      ++counts_.nested_openers;
      return;
    }
    Open& o = lane.open.emplace();
    o.ip = ip;
    o.offset = header.offset;
    o.position = position;
    o.time = options_.clock.TimeOf(header);
    o.alternative = opener;
    o.mode = mode;
    return;
  }
  if (closer >= 0) ++counts_.closers_without_opener;
}

}  // namespace ptprof::delta
