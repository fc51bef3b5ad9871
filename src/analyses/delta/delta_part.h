#pragma once
// DeltaPart is one part of a delta profile taken in parts (DeltaProfiler::NewPart). It does the
// costly half of the profiler's work on the thread that decodes its piece of the stream: looking
// every block up in that thread's block expander (decoding instructions met for the first time)
// and running the pattern matchers. What it cannot know is how its piece begins: the lanes' open
// intervals and positions, and the sequences in progress in their matchers. The intervals are
// left to DeltaProfiler::Fold, which takes the part's records in stream order. For the matchers,
// a lane's first PatternMatcher::Horizon() instructions in the piece (its prefix) are kept as
// blocks for Fold to match itself, from the state the lane really had; from then on no sequence
// from before the piece can be in progress, so the part's own matcher for the lane, which began
// idle at the start of the piece, is in the lane's real state, and the part matches on its own
// and keeps only the matches and how far the lane moved. Fold then takes the part's state for
// every lane past its prefix. Records, in stream order:
//  - kAdvance (in a prefix): instructions of blocks without an instruction of either pattern,
//    all of their code found (consecutive ones of a lane add up);
//  - kBlock (in a prefix): a block with such instructions (its hits) or with code not found;
//  - kMove (past the prefix): instructions matched here, of which `unexpanded` had no code;
//  - kMatch (past the prefix): a match of either pattern, at instruction `index` of the lane
//    from the kMove before it on;
//  - kGap: a gap in the trace (the lane's matcher restarts: the lane is past its prefix).
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "src/analyses/delta/delta_profiler.h"

namespace ptprof::delta {

class DeltaPart : public EventSink {
 public:
  explicit DeltaPart(const DeltaProfiler& owner);
  ~DeltaPart() override;

  void OnEvent(const TraceEvent& event) override;
  void OnBlocks(const BlockBatch& batch) override;
  // The piece is complete: the expansion goes back to the profiler, for the thread's next part.
  void OnEnd() override;

  struct Record {
    enum class Kind : uint8_t { kAdvance, kBlock, kMove, kMatch, kGap };
    Kind kind = Kind::kAdvance;
    ExecMode mode = ExecMode::kUnknown;
    int32_t lane = 0;        // DeltaProfiler::LaneId
    uint32_t expanded = 0;   // kBlock: instructions whose code was found, from the start
    uint32_t hits_begin = 0, hits_end = 0;  // kBlock: its hits in hits()
    int32_t matched[2] = {-1, -1};          // kMatch: the alternatives that matched, or -1
    uint64_t insns = 0;      // kAdvance, kBlock, kMove; kMatch: its index in the lane (above)
    uint64_t unexpanded = 0; // kMove
    uint64_t ip = 0;         // kMatch
    EventHeader header;      // kBlock, kMatch, kGap (kAdvance, kMove: the lane's)
  };
  struct Lane {
    EventHeader header;  // its first event's (CPU, thread)
    patterns::PatternMatcher::State match;  // begun idle at the start of the piece
    uint64_t insns = 0;   // instructions in the piece
    bool settled = false;  // past its prefix: `match` is the lane's real state
  };
  const std::vector<Record>& records() const { return records_; }
  const std::vector<BlockHit>& hits() const { return hits_; }
  const std::map<int32_t, Lane>& lanes() const { return lanes_; }

 private:
  Lane& LaneOf(int32_t key, const EventHeader& header);
  // One block (or instruction) of `insns` instructions in lane `key`; `event` gives its header
  // when it is needed (a match, or a block kept for Fold).
  template <typename HeaderOf>
  void Block(int32_t key, const EventHeader& lane_header, uint32_t insns, ExecMode mode,
             BlockExpander::Seen& seen, const HeaderOf& header_of);
  void Move(int32_t key, const EventHeader& lane_header, uint64_t insns, uint64_t unexpanded);

  const DeltaProfiler& owner_;
  const patterns::PatternMatcher& matcher_;
  const uint64_t horizon_;
  std::unique_ptr<DeltaProfiler::Expansion> expansion_;
  std::map<int32_t, Lane> lanes_;
  int32_t last_key_ = 0;
  Lane* last_lane_ = nullptr;
  std::vector<int> matched_;  // scratch
  std::vector<Record> records_;
  std::vector<BlockHit> hits_;
};

}  // namespace ptprof::delta
