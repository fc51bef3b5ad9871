#pragma once
// FlowEdges answers "which normalised branches did the decoded flow (side A of `ptprof validate`)
// take, how often, over which AutoFDO ranges, and which of B's bursts did it take contiguously?".
// It takes the decoded blocks (the taken branches of src/model/taken_branches.h: {a block's last
// ip -> the next block of the same thread}, runs broken at syscalls, interrupts, gaps, trace
// stops), normalises every branch to (file, offset) through A's sideband, and keeps:
//   - the edges, numbered in an EdgeTable, with their counts;
//   - the range counts [previous branch's target, this branch's source] within a run;
//   - how many unbroken runs there were;
//   - which bursts of a BurstMatcher (LookFor) occur inside one run, found as the flow goes by:
//     the flow itself is not kept, so its memory does not grow with the trace.
//
// It takes its stream in parts (src/model/parted_sink.h): a part knows nothing of what came before
// it, so per thread it keeps what the stream decides at the fold: the first block's address (the
// target of a branch still pending before the part), whether the thread's run goes on into the
// part, the source of its first branch (whose range starts at the stream's last target), and the
// part's first BurstMatcher::longest() edges, read again from the stream's matcher state (a burst
// across the seam). The parts number edges and ranges in one table, shared under a lock (taken
// only for what no part on that thread met before: the caches of raw branches to numbers pass from
// one part to the next on a thread), so a fold costs what the part's edges and ranges do, not its
// branches. Nothing of the results depends on how the stream was cut or on the order edges were
// numbered.
#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "src/analyses/crossval/address_normaliser.h"
#include "src/analyses/crossval/branch_edges.h"
#include "src/analyses/crossval/burst_matcher.h"
#include "src/analyses/crossval/flat_id_map.h"
#include "src/model/adaptive_mutex.h"
#include "src/model/parted_sink.h"
#include "src/model/taken_branches.h"

namespace ptprof {

// An AutoFDO range: image number, offset where straight-line execution began, offset it reached.
using RangeKey = std::tuple<uint32_t, uint64_t, uint64_t>;

struct RangeKeyHash {
  size_t operator()(const RangeKey& r) const {
    uint64_t h = (std::get<1>(r) * 0x9e3779b97f4a7c15ULL) ^ std::get<0>(r);
    h = (h ^ std::get<2>(r)) * 0xbf58476d1ce4e5b9ULL;
    return static_cast<size_t>(h ^ (h >> 31));
  }
};

inline constexpr uint32_t kNoRange = UINT32_MAX;

class FlowEdges : public PartedSink {
 public:

  struct RangeCount {
    RangeKey range;
    uint64_t count = 0;
    uint64_t source = UINT64_MAX;  // the lowest address of the branch that ended the range
  };

  explicit FlowEdges(const AddressNormaliser& normaliser);

  // Looks for `matcher`'s bursts (numbered in table()) in the flow from here on; given before the
  // first event and the first NewPart. `matcher` is built, and outlives this sink and its parts.
  void LookFor(const BurstMatcher& matcher) { matcher_ = &matcher; }

  void OnEvent(const TraceEvent& event) override;
  void OnBlocks(const BlockBatch& batch) override;
  // Ends every thread's run (for a part: nothing, its end is not the stream's).
  void OnEnd() override;

  std::unique_ptr<EventSink> NewPart() const override;
  void Fold(std::unique_ptr<EventSink> part) override;

  // The branch {from -> to} of `thread` in process `pid` (normalised through that process's
  // mappings), and the end of a thread's run, for callers that have branches rather than blocks.
  void AddBranch(int64_t thread, int32_t pid, uint64_t from, uint64_t to);
  void AddBreak(int64_t thread);

  // The numbers of the edges: B's bursts' are given before the flow (CrossValidator::Expect),
  // the flow's own as it goes. Read after OnEnd, or before the first event.
  EdgeTable& table() { return shared_->table; }
  // How often each of A's edges was taken, by number (edges numbered later: none).
  uint64_t EdgeCount(uint32_t id) const { return edge_counts_.CountOf(id); }
  size_t edges() const { return edge_counts_.counts.size(); }
  // The lowest source address edge `id` was taken from (its function names it); UINT64_MAX for
  // an edge the flow did not take (numbered by a part that was dropped, or by side B).
  uint64_t SourceOf(uint32_t id) const { return edge_counts_.SourceOf(id); }
  // The ranges the flow went through.
  std::vector<RangeCount> Ranges() const;
  uint64_t branches() const { return branches_; }
  uint64_t runs() const { return runs_; }
  uint64_t unmapped() const { return unmapped_; }

 private:
  struct Thread {
    // The event layer: the branch the last block left pending, in process `pid`.
    PendingBranch pending;
    int32_t pid = -1;
    // The run layer: the previous branch's edge (its target is where the next range begins;
    // kNoEdge after a break), the branches of the run not yet closed, and the matcher's state.
    uint32_t last = kNoEdge;
    uint64_t open = 0;
    BurstMatcher::State state = BurstMatcher::kRoot;
    // In a part, what the stream before it decides: whether `open` and `last` still continue the
    // stream's (no break, no branch yet), the first event (a block at `lead_ip` or a break), and
    // the part's first branch while `last` was the stream's.
    bool run_inherited = false, last_inherited = false;
    bool seen = false, lead_break = false;
    uint64_t lead_ip = 0;
    uint64_t lead_edges = 0;  // the branches of the run that continued the stream's, once broken
    uint32_t first_edge = kNoEdge;  // the part's first branch while `last` was the stream's
    uint64_t first_source = 0;      // and its address
    // The first edges of the run that continues the stream's, up to the matcher's longest burst.
    std::vector<uint32_t> head;
  };
  struct BranchKey {
    int32_t pid;
    uint64_t from, to;
    bool operator==(const BranchKey&) const = default;
  };
  struct BranchKeyHash {
    size_t operator()(const BranchKey& k) const {
      uint64_t h = (k.from * 0x9e3779b97f4a7c15ULL) ^ static_cast<uint32_t>(k.pid);
      h = (h ^ k.to) * 0xbf58476d1ce4e5b9ULL;
      return static_cast<size_t>(h ^ (h >> 29));
    }
  };

  Thread& ThreadOf(int64_t thread);
  // The event layer: a block of `thread`, a break.
  void Block(Thread& t, int32_t pid, uint64_t first_ip, uint64_t last_ip, BlockEnd end);
  void EventBreak(Thread& t);
  // The run layer.
  void Branch(Thread& t, int32_t pid, uint64_t from, uint64_t to);
  void Break(Thread& t);
  void CloseRun(Thread& t);
  // The edge number of a branch, kNoEdge when either end lies outside A's files.
  // (Not inlined, as RangeOf: the path of a branch that is not one of the last two to follow the
  // previous edge, kept out of Branch.)
  [[gnu::noinline]] uint32_t EdgeOf(int32_t pid, uint64_t from, uint64_t to);
  // The number of the range from edge `last`'s target to edge `id`'s source, kNoRange when the
  // two do not make one (another file, backwards).
  [[gnu::noinline]] uint32_t RangeOf(uint32_t last, uint32_t id);

  // Per edge, the last two branches that followed it and what they were, the latest first: in
  // a loop the next branch is found without a lookup.
  struct Follow {
    uint64_t from = 0, to = 0;
    int32_t pid = -2;  // no process
    uint32_t edge = kNoEdge, range = 0;
  };
  static constexpr uint32_t kNoImage = UINT32_MAX;
  // What a sink learnt of raw branches, by the shared numbers: valid in any part.
  struct Cache {
    std::vector<std::array<Follow, 2>, HugeAllocator<std::array<Follow, 2>>> follow;  // by edge
    FlatIdMap<BranchKey, BranchKeyHash> edge_of;
    FlatIdMap<uint64_t, std::hash<uint64_t>> range_of;  // by (edge before << 32 | edge)
    // The ends of the edges this cache numbered, by number ({kNoImage, 0} for the others): a
    // range's key is made without the lock, which is taken only to number a range.
    std::vector<std::pair<Location, Location>> ends;
  };
  // Counts by number, each with the lowest source address of the branches counted.
  struct SourcedCounts {
    std::vector<uint64_t> counts, sources;
    void Add(uint32_t id, uint64_t source, uint64_t n) {
      if (id >= counts.size()) {
        counts.resize(id + 1, 0);
        sources.resize(id + 1, UINT64_MAX);
      }
      counts[id] += n;
      sources[id] = std::min(sources[id], source);
    }
    // Adds `other`'s counts, leaving it as new but for its size (a part's counts, kept for the
    // next part: made anew, each part's grew into fresh memory as large as the whole stream's).
    void Take(SourcedCounts& other) {
      for (uint32_t id = 0; id < other.counts.size(); ++id) {
        if (!other.counts[id]) continue;
        Add(id, other.sources[id], other.counts[id]);
        other.counts[id] = 0;
        other.sources[id] = UINT64_MAX;
      }
    }
    uint64_t CountOf(uint32_t id) const { return id < counts.size() ? counts[id] : 0; }
    uint64_t SourceOf(uint32_t id) const { return id < sources.size() ? sources[id] : UINT64_MAX; }
  };
  // The numbers of edges and ranges, one table for the stream and all its parts, and the caches
  // no part has just now.
  struct Shared {
    // Taken for every edge a cache meets first, and every range between two of its edges.
    AdaptiveMutex mutex;
    EdgeTable table;
    std::vector<RangeKey> ranges;
    FlatIdMap<RangeKey, RangeKeyHash> range_at;
    std::vector<std::unique_ptr<Cache>> idle;
    // Folded parts' edge and range counts, emptied, for the next parts.
    std::vector<std::pair<SourcedCounts, SourcedCounts>> spare_counts;
  };
  FlowEdges(const AddressNormaliser& normaliser, std::shared_ptr<Shared> shared, bool part,
            std::unique_ptr<Cache> cache)
      : normaliser_(normaliser), part_(part), shared_(std::move(shared)), cache_(std::move(cache)) {}

  const AddressNormaliser& normaliser_;
  const bool part_;
  std::shared_ptr<Shared> shared_;
  std::unique_ptr<Cache> cache_;  // this sink's own, or a part's, borrowed until its OnEnd
  const BurstMatcher* matcher_ = nullptr;
  std::unordered_map<int64_t, Thread> threads_;
  int64_t cached_thread_ = INT64_MIN;
  Thread* cached_ = nullptr;
  SourcedCounts edge_counts_, range_counts_;  // by edge number, by range number
  uint64_t branches_ = 0, runs_ = 0, unmapped_ = 0;
};

}  // namespace ptprof
