#pragma once
// DeltaPart is one part of a delta profile taken in parts (DeltaProfiler::NewPart). It does the
// profiler's work on the thread that decodes its piece of the stream, as far as it can without
// knowing how the piece begins: the lanes' positions, their open intervals, and the sequences in
// progress in their matchers. Per lane it goes through three phases:
//  A. Its first PatternMatcher::Horizon() instructions in the piece: a sequence from before the
//     piece may still be in progress, so the blocks are kept (kAdvance, kBlock) for Fold to match
//     from the state the lane really had. The part's own matcher for the lane, begun idle, goes
//     along: past the horizon no sequence from before can be left, and it is in the real state.
//  B. Matched here, but whether an interval is open is not known: the matches are kept (kMatch)
//     for Fold to open and close intervals.
//  C. From a match that only closes (whatever was open, nothing is now) or a gap (which drops
//     what was open) on, the part knows the lane's interval state and closes intervals itself, in
//     a profile of its own; kIntervals records say where in the stream they closed, for Fold to
//     number them in closing order.
// A gap in phase A or B is kept (kGap) and starts phase C. Positions in the records and in the
// part's own profile count the lane's instructions from the start of the piece; past phase A the
// part only counts instructions, and Fold moves every lane on by all of its instructions in the
// piece at the end. Records come in stream order.
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
    enum class Kind : uint8_t { kAdvance, kBlock, kMatch, kGap, kIntervals };
    Kind kind = Kind::kAdvance;
    ExecMode mode = ExecMode::kUnknown;
    int32_t lane = 0;        // DeltaProfiler::LaneId
    uint32_t expanded = 0;   // kBlock: instructions whose code was found, from the start
    uint32_t hits_begin = 0, hits_end = 0;  // kBlock: its hits in hits()
    int32_t matched[2] = {-1, -1};          // kMatch: the alternatives that matched, or -1
    // kAdvance, kBlock: instructions; kMatch: its position in the lane from the start of the
    // piece; kIntervals: how many of local()'s intervals closed here.
    uint64_t insns = 0;
    uint64_t ip = 0;         // kMatch
    EventHeader header;      // kBlock, kMatch, kGap; kAdvance: the lane's first
  };
  enum class Phase : uint8_t { kPrefix, kMatching, kKnown };
  struct Lane {
    EventHeader header;  // its first event's (CPU, thread)
    patterns::PatternMatcher::State match;  // begun idle at the start of the piece
    Phase phase = Phase::kPrefix;
    DeltaProfiler::Lane* book = nullptr;  // in local(): position from the start of the piece
  };
  // The lanes' CPU and thread in local()'s intervals when their events did not say: Fold puts
  // the profile's lane's in.
  static constexpr int32_t kLaneDefault = INT32_MIN;

  const std::vector<Record>& records() const { return records_; }
  const std::vector<BlockHit>& hits() const { return hits_; }
  const std::map<int32_t, Lane>& lanes() const { return lanes_; }
  const DeltaProfiler& local() const { return *local_; }
  // Instructions of the lanes past phase A (of which without code), which no record holds.
  uint64_t settled_instructions() const { return settled_insns_; }
  uint64_t settled_unexpanded() const { return settled_unexpanded_; }

 private:
  Lane& LaneOf(int32_t key, const EventHeader& header);
  // One block (or instruction) of `insns` instructions in lane `key`; `header_of()` gives its
  // header when it is needed (a match, or a block kept for Fold).
  template <typename HeaderOf>
  void Block(Lane& lane, int32_t key, uint32_t insns, ExecMode mode, BlockExpander::Seen& seen,
             const HeaderOf& header_of);
  // A match at the block's instruction `index`: the alternatives as DeltaProfiler::OnMatch has
  // them.
  void Match(Lane& lane, int32_t key, const EventHeader& header, uint64_t ip, uint32_t index,
             ExecMode mode, int first, int second);
  // `closed` more intervals closed in local() (by a lane past phase B): a kIntervals record says
  // where, among the records, for Fold to number them.
  void NoteClosed(int32_t key, uint64_t closed);

  const DeltaProfiler& owner_;
  const patterns::PatternMatcher& matcher_;
  const uint64_t horizon_;
  std::unique_ptr<DeltaProfiler::Expansion> expansion_;
  std::unique_ptr<DeltaProfiler> local_;
  std::map<int32_t, Lane> lanes_;
  int32_t last_key_ = 0;
  Lane* last_lane_ = nullptr;
  std::vector<int> matched_;  // scratch
  std::vector<Record> records_;
  std::vector<BlockHit> hits_;
  uint64_t settled_insns_ = 0, settled_unexpanded_ = 0;
};

}  // namespace ptprof::delta
