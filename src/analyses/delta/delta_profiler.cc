#include "src/analyses/delta/delta_profiler.h"

#include <algorithm>

namespace ptprof::delta {

Result<std::unique_ptr<DeltaProfiler>> DeltaProfiler::Create(const ImageSet& images,
                                                              const patterns::Pattern& open,
                                                              const patterns::Pattern& close,
                                                              DeltaOptions options) {
  auto matcher = patterns::PatternMatcher::Compile({open, close});
  if (!matcher) return tl::unexpected(matcher.error());
  return std::unique_ptr<DeltaProfiler>(
      new DeltaProfiler(images, open, close, std::move(*matcher), std::move(options)));
}

DeltaProfiler::DeltaProfiler(const ImageSet& images, patterns::Pattern open,
                             patterns::Pattern close, patterns::PatternMatcher matcher,
                             DeltaOptions options)
    : open_(std::move(open)),
      close_(std::move(close)),
      matcher_(std::move(matcher)),
      options_(std::move(options)),
      images_(images),
      own_(images, matcher_) {
  same_pattern_ = open_.name == close_.name;
  counts_.matches[0].assign(open_.alternatives.size(), 0);
  counts_.matches[1].assign(close_.alternatives.size(), 0);
}

DeltaProfiler::Lane& DeltaProfiler::LaneOf(const EventHeader& header) {
  // Per CPU; a per-thread stream (no CPU) is its own lane, as is every thread with --per-thread.
  int32_t id = LaneId(header, options_.per_thread);
  if (last_lane_ && id == last_key_) return *last_lane_;
  auto [it, inserted] = lanes_.try_emplace(id);
  if (inserted) {
    it->second.match = matcher_.NewState();
    it->second.cpu = header.cpu;
    it->second.tid = header.tid;
  }
  last_key_ = id;
  last_lane_ = &it->second;
  return it->second;
}

void DeltaProfiler::Close(Lane& lane, const EventHeader& header, uint64_t ip, uint64_t position,
                          int closer) {
  const Open& o = *lane.open;
  const uint64_t instructions = position - o.position;
  const std::optional<double> close_time = options_.clock.TimeOf(header);
  std::optional<double> time;
  if (o.time && close_time) time = *close_time - *o.time;
  const uint64_t id = ++counts_.intervals;
  instruction_values_.Add(static_cast<double>(instructions));
  if (time) {
    time_values_.Add(*time);
  } else if (++counts_.intervals_without_time == 1) {
    longest_by_time_ = {};  // no longer by time
  }
  const bool by_time = time && counts_.intervals_without_time == 0;
  // Most intervals are neither kept nor among the longest: those are never built.
  if (!options_.keeping.all && !(by_time && MayBeLongestByTime(*time, instructions)) &&
      !MayBeLongestByInsns(instructions)) {
    lane.open.reset();
    return;
  }
  Interval interval;
  interval.id = id;
  interval.cpu = header.cpu != kUnknownId ? header.cpu : lane.cpu;
  interval.tid = header.tid != kUnknownId ? header.tid : lane.tid;
  interval.open_ip = o.ip;
  interval.close_ip = ip;
  interval.open_offset = o.offset;
  interval.close_offset = header.offset;
  interval.open_position = o.position;
  interval.close_position = position;
  interval.open_time = o.time;
  interval.close_time = close_time;
  interval.open_alternative = o.alternative;
  interval.close_alternative = closer;
  interval.nested = o.nested;
  interval.lane = LaneId(header, options_.per_thread);
  interval.mode = o.mode;
  if (by_time) KeepIfLongest(longest_by_time_, interval, true);
  KeepIfLongest(longest_by_insns_, interval, false);
  if (options_.keeping.all) intervals_.push_back(interval);
  lane.open.reset();
}

namespace {

// Whether `a` comes before `b` among the longest: longer (by time, then instructions; or by
// instructions only), or as long and closed first.
bool Before(const Interval& a, const Interval& b, bool by_time) {
  if (by_time && *a.time() != *b.time()) return *a.time() > *b.time();
  if (a.instructions() != b.instructions()) return a.instructions() > b.instructions();
  return a.id < b.id;
}

}  // namespace

void DeltaProfiler::KeepIfLongest(std::vector<Interval>& heap, const Interval& interval,
                                  bool by_time) const {
  const size_t limit = options_.keeping.longest;
  if (limit == 0) return;
  auto before = [by_time](const Interval& a, const Interval& b) { return Before(a, b, by_time); };
  if (heap.size() < limit) {
    heap.push_back(interval);
    std::push_heap(heap.begin(), heap.end(), before);
  } else if (before(interval, heap.front())) {
    std::pop_heap(heap.begin(), heap.end(), before);
    heap.back() = interval;
    std::push_heap(heap.begin(), heap.end(), before);
  }
}

std::vector<Interval> DeltaProfiler::Longest() const {
  const bool by_time = counts_.intervals_without_time == 0;
  std::vector<Interval> longest = by_time ? longest_by_time_ : longest_by_insns_;
  std::sort(longest.begin(), longest.end(),
            [by_time](const Interval& a, const Interval& b) { return Before(a, b, by_time); });
  return longest;
}

void DeltaProfiler::OnBlock(const EventHeader& header, const ExecBlock& block) {
  Lane& lane = LaneOf(header);
  const ExpandedBlock& expanded = own_.expander.Expand(block);
  MatchBlock(lane, header, block.insns, block.mode, expanded.hits, expanded.expanded);
}

void DeltaProfiler::MatchBlock(Lane& lane, const EventHeader& header, uint32_t insns,
                               ExecMode mode, std::span<const BlockHit> hits, uint32_t expanded) {
  counts_.instructions += insns;
  StepThroughBlock(matcher_, lane.match, hits, expanded, matched_, [&](const BlockHit& hit) {
    OnMatch(lane, header, hit.ip, lane.position + hit.index, mode, matched_[0], matched_[1]);
  });
  if (expanded < insns) {
    counts_.unexpanded_instructions += insns - expanded;
    matcher_.Reset(lane.match);
  }
  lane.position += insns;
}

void DeltaProfiler::Advance(Lane& lane, uint64_t insns) {
  counts_.instructions += insns;
  lane.position += insns;
  if (!lane.match.Idle()) matcher_.Skip(lane.match, insns);
}

IdleOutcome DeltaProfiler::WorkOutIdle(const patterns::PatternMatcher& matcher,
                                       BlockExpander::Seen& seen, uint32_t insns,
                                       std::vector<int>& scratch) {
  const ExpandedBlock& expanded = *seen.block;
  if (expanded.idle == IdleOutcome::kUnknown) {
    patterns::PatternMatcher::State state = matcher.NewState();
    std::vector<IdleMatch> matches;
    StepThroughBlock(matcher, state, expanded.hits, expanded.expanded, scratch,
                     [&](const BlockHit& hit) {
                       const auto at = static_cast<uint32_t>(&hit - expanded.hits.data());
                       matches.push_back({at, {scratch[0], scratch[1]}});
                     });
    if (!state.Idle() || expanded.expanded != insns) {
      expanded.idle = IdleOutcome::kUnsettled;
    } else if (matches.empty()) {
      expanded.idle = IdleOutcome::kQuiet;
    } else {
      expanded.idle = IdleOutcome::kSettled;
      expanded.idle_matches = std::move(matches);
    }
  }
  seen.Settle();
  return seen.idle;
}

RunMemo::Outcome DeltaProfiler::Expansion::WorkOutRun(const patterns::PatternMatcher& matcher,
                                                      uint64_t source, const BatchRun& run,
                                                      std::vector<int>& scratch) {
  // A block of the run: false when it must be stepped through, else true with its matches,
  // placed `before` instructions into the run.
  return runs.Find(source, run, [&](const PackedEvent& p, uint64_t before,
                                    std::vector<RunMatch>& out) {
    const ExecMode mode = static_cast<ExecMode>(p.mode);
    BlockExpander::Seen& seen = expander.Find(p.first_ip_or_index, p.insns, mode);
    const IdleOutcome outcome = OutcomeOf(matcher, seen, p.insns, true, scratch);
    if (outcome == IdleOutcome::kUnsettled) return false;
    if (outcome == IdleOutcome::kSettled) {
      seen.EachIdleMatch([&](uint64_t ip, uint32_t index, int first, int second) {
        out.push_back({0, static_cast<uint32_t>(before + index), ip, mode, {first, second}});
      });
    }
    return true;
  });
}

void DeltaProfiler::OnBlocks(const BlockBatch& batch) {
  if (batch.blocks.empty()) return;
  Lane& lane = LaneOf(batch.Header());
  bool idle = lane.match.Idle();  // no sequence in progress: skipping instructions changes nothing
  size_t next_run = 0;
  for (size_t i = 0; i < batch.blocks.size(); ++i) {
    if (idle && !batch.runs.empty()) {
      if (const BatchRun* run = batch.RunAt(i, next_run)) {
        // As the blocks one by one below.
        const RunMemo::Outcome outcome = own_.IdleRun(matcher_, batch.run_source, *run, matched_);
        if (outcome.settled) {
          counts_.instructions += outcome.insns;
          for (const RunMatch& m : outcome.matches)
            OnMatch(lane, batch.HeaderOf(i + m.block), m.ip, lane.position + m.position, m.mode,
                    m.matched[0], m.matched[1]);
          lane.position += outcome.insns;
          i += run->count - 1;
          continue;
        }
      }
    }
    const PackedEvent& p = batch.blocks[i];
    const ExecMode mode = static_cast<ExecMode>(p.mode);
    BlockExpander::Seen& seen = own_.expander.Find(p.first_ip_or_index, p.insns, mode);
    const IdleOutcome outcome = OutcomeOf(seen, p.insns, idle);
    if (outcome == IdleOutcome::kQuiet) {
      // As OnBlock, for a block that matches nothing that lasts.
      counts_.instructions += p.insns;
      lane.position += p.insns;
      if (!idle) {
        matcher_.Skip(lane.match, p.insns);
        idle = lane.match.Idle();
      }
      continue;
    }
    // As OnBlock, with the lane and the expanded block found already (a batch's blocks share
    // their lane), and of the block's event only its header.
    const EventHeader header = batch.HeaderOf(i);
    if (outcome == IdleOutcome::kSettled) {
      // Its matches as stepping it from idle makes them; it leaves the lane idle.
      counts_.instructions += p.insns;
      seen.EachIdleMatch([&](uint64_t ip, uint32_t index, int first, int second) {
        OnMatch(lane, header, ip, lane.position + index, mode, first, second);
      });
      lane.position += p.insns;
      continue;
    }
    const ExpandedBlock& expanded = *seen.block;
    MatchBlock(lane, header, p.insns, mode, expanded.hits, expanded.expanded);
    idle = lane.match.Idle();
  }
}

void DeltaProfiler::OnEvent(const TraceEvent& event) {
  if (const auto* block = std::get_if<ExecBlock>(&event.body)) {
    OnBlock(event.header, *block);
  } else if (const auto* insn = std::get_if<Instruction>(&event.body)) {
    ExecBlock one;
    one.first_ip = one.last_ip = insn->ip;
    one.insns = 1;
    one.mode = insn->mode;
    OnBlock(event.header, one);
  } else if (std::holds_alternative<TraceGap>(event.body)) {
    OnGap(event.header);
  }
}

void DeltaProfiler::OnGap(const EventHeader& header) {
  ++counts_.gaps;
  Lane& lane = LaneOf(header);
  matcher_.Reset(lane.match);
  if (lane.open) {
    ++counts_.dropped_at_gap;
    lane.open.reset();
  }
}

void DeltaProfiler::OnEnd() {
  for (auto& [key, lane] : lanes_) {
    if (lane.open) {
      ++counts_.open_at_end;
      lane.open.reset();
    }
  }
}

}  // namespace ptprof::delta
