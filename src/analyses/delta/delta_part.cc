#include "src/analyses/delta/delta_part.h"

#include <algorithm>
#include <utility>

namespace ptprof::delta {

DeltaPart::DeltaPart(const DeltaProfiler& owner)
    : owner_(owner),
      matcher_(owner.matcher_),
      horizon_(owner.matcher_.Horizon()),
      expansion_(owner.BorrowExpansion()),
      local_(owner.LocalProfile()),
      matched_(owner.matcher_.pattern_count(), -1) {}

DeltaPart::~DeltaPart() { OnEnd(); }

void DeltaPart::OnEnd() {
  if (expansion_) owner_.ReturnExpansion(std::move(expansion_));
}

DeltaPart::Lane& DeltaPart::LaneOf(int32_t key, const EventHeader& header) {
  if (last_lane_ && key == last_key_) return *last_lane_;
  auto [it, inserted] = lanes_.try_emplace(key);
  if (inserted) {
    Lane& lane = it->second;
    lane.header = header;
    lane.match = matcher_.NewState();
    lane.book = &local_->LaneOf(header);
    lane.book->cpu = lane.book->tid = kLaneDefault;
  }
  last_key_ = key;
  last_lane_ = &it->second;
  return it->second;
}

void DeltaPart::Match(Lane& lane, int32_t key, const EventHeader& header, uint64_t ip,
                      uint32_t index, ExecMode mode, int first, int second) {
  if (lane.phase == Phase::kKnown) {
    const uint64_t intervals = local_->counts_.intervals;
    local_->OnMatch(*lane.book, header, ip, lane.book->position + index, mode, first, second);
    if (local_->counts_.intervals != intervals)
      NoteClosed(key, local_->counts_.intervals - intervals);
    return;
  }
  Record match;
  match.kind = Record::Kind::kMatch;
  match.mode = mode;
  match.lane = key;
  match.matched[0] = first;
  match.matched[1] = second;
  match.insns = lane.book->position + index;
  match.ip = ip;
  match.header = header;
  records_.push_back(match);
  // A closer that is no opener leaves nothing open, whatever was (DeltaProfiler::OnMatch).
  const int opener = first;
  const int closer = owner_.same_pattern_ ? first : second;
  if (!owner_.same_pattern_ && closer >= 0 && opener < 0) lane.phase = Phase::kKnown;
}

void DeltaPart::NoteClosed(int32_t key, uint64_t closed) {
  if (!records_.empty() && records_.back().kind == Record::Kind::kIntervals) {
    records_.back().insns += closed;
    return;
  }
  Record record;
  record.kind = Record::Kind::kIntervals;
  record.lane = key;
  record.insns = closed;
  records_.push_back(record);
}

template <typename HeaderOf>
void DeltaPart::Block(Lane& lane, int32_t key, uint32_t insns, ExecMode mode,
                      BlockExpander::Seen& seen, const HeaderOf& header_of) {
  DeltaProfiler::Lane& book = *lane.book;
  if (lane.phase == Phase::kPrefix && book.position >= horizon_) lane.phase = Phase::kMatching;
  if (lane.phase == Phase::kPrefix) {
    // Kept for Fold; our own matcher goes along.
    if (seen.plain) {
      if (!records_.empty() && records_.back().kind == Record::Kind::kAdvance &&
          records_.back().lane == key) {
        records_.back().insns += insns;
      } else {
        Record advance;
        advance.lane = key;
        advance.insns = insns;
        advance.header = lane.header;
        records_.push_back(advance);
      }
      if (!lane.match.Idle()) matcher_.Skip(lane.match, insns);
      book.position += insns;
      return;
    }
    const ExpandedBlock& expanded = *seen.block;
    Record block;
    block.kind = Record::Kind::kBlock;
    block.mode = mode;
    block.lane = key;
    block.expanded = expanded.expanded;
    block.hits_begin = static_cast<uint32_t>(hits_.size());
    hits_.insert(hits_.end(), expanded.hits.begin(), expanded.hits.end());
    block.hits_end = static_cast<uint32_t>(hits_.size());
    block.insns = insns;
    block.header = header_of();
    records_.push_back(block);
    StepThroughBlock(matcher_, lane.match, expanded.hits, expanded.expanded, matched_,
                     [](const BlockHit&) {});
    if (expanded.expanded < insns) {
      // Fold restarts the lane's matcher here too: from now on both agree.
      matcher_.Reset(lane.match);
      lane.phase = Phase::kMatching;
    }
    book.position += insns;
    return;
  }
  // Matched here, as DeltaProfiler::OnBlocks and OnBlock do.
  const bool idle = lane.match.Idle();
  const IdleOutcome outcome = DeltaProfiler::OutcomeOf(matcher_, seen, insns, idle, matched_);
  if (outcome == IdleOutcome::kQuiet) {
    settled_insns_ += insns;
    if (!idle) matcher_.Skip(lane.match, insns);
    book.position += insns;
    return;
  }
  if (outcome == IdleOutcome::kSettled) {
    seen.EachIdleMatch([&](uint64_t ip, uint32_t index, int first, int second) {
      Match(lane, key, header_of(), ip, index, mode, first, second);
    });
    settled_insns_ += insns;
    book.position += insns;
    return;
  }
  const ExpandedBlock& expanded = *seen.block;
  StepThroughBlock(matcher_, lane.match, expanded.hits, expanded.expanded, matched_,
                   [&](const BlockHit& hit) {
                     Match(lane, key, header_of(), hit.ip, hit.index, mode, matched_[0],
                           matched_[1]);
                   });
  uint64_t unexpanded = 0;
  if (expanded.expanded < insns) {
    unexpanded = insns - expanded.expanded;
    matcher_.Reset(lane.match);
  }
  settled_insns_ += insns;
  settled_unexpanded_ += unexpanded;
  book.position += insns;
}

void DeltaPart::OnBlocks(const BlockBatch& batch) {
  if (batch.blocks.empty()) return;
  BlockExpander& expander = expansion_->expander;
  const EventHeader shared = batch.Header();
  const int32_t key = DeltaProfiler::LaneId(shared, owner_.options_.per_thread);
  Lane& lane = LaneOf(key, shared);
  EventHeader header;
  size_t i = 0;
  auto header_of = [&]() -> const EventHeader& {
    header = batch.HeaderOf(i);
    return header;
  };
  bool idle = lane.match.Idle();
  // Past phase A (it never comes back): the blocks are matched here.
  bool past_prefix = lane.phase != Phase::kPrefix;
  // Instructions past phase A that the lane's position and settled_insns_ do not count yet:
  // added at once before anything reads the position, and at the end.
  uint64_t advanced = 0;
  auto advance = [&] {
    settled_insns_ += advanced;
    lane.book->position += advanced;
    advanced = 0;
  };
  DeltaProfiler::Expansion& expansion = *expansion_;
  size_t next_run = 0;
  for (; i < batch.blocks.size(); ++i) {
    if (idle && past_prefix && !batch.runs.empty()) {
      if (const BatchRun* run = batch.RunAt(i, next_run)) {
        // As Block one by one, as DeltaProfiler::OnBlocks.
        const RunMemo::Outcome outcome =
            expansion.IdleRun(matcher_, batch.run_source, *run, matched_);
        if (outcome.settled) {
          if (!outcome.matches.empty()) {
            advance();
            if (lane.phase == Phase::kKnown) {
              // As Match, straight into the local profile, the intervals closed noted once.
              DeltaProfiler& local = *local_;
              DeltaProfiler::Lane& book = *lane.book;
              const uint64_t intervals = local.counts_.intervals;
              for (const RunMatch& m : outcome.matches)
                local.OnMatch(book, batch.HeaderOf(i + m.block), m.ip, book.position + m.position,
                              m.mode, m.matched[0], m.matched[1]);
              if (local.counts_.intervals != intervals)
                NoteClosed(key, local.counts_.intervals - intervals);
            } else {
              for (const RunMatch& m : outcome.matches)
                Match(lane, key, batch.HeaderOf(i + m.block), m.ip, m.position, m.mode,
                      m.matched[0], m.matched[1]);
            }
          }
          advanced += outcome.insns;
          i += run->count - 1;
          continue;
        }
      }
    }
    const PackedEvent& p = batch.blocks[i];
    const ExecMode mode = static_cast<ExecMode>(p.mode);
    BlockExpander::Seen& seen = expander.Find(p.first_ip_or_index, p.insns, mode);
    if (past_prefix &&
        DeltaProfiler::OutcomeOf(matcher_, seen, p.insns, idle, matched_) == IdleOutcome::kQuiet) {
      // The common case, as short as DeltaProfiler::OnBlocks makes it.
      advanced += p.insns;
      if (!idle) {
        matcher_.Skip(lane.match, p.insns);
        idle = lane.match.Idle();
      }
      continue;
    }
    advance();
    Block(lane, key, p.insns, mode, seen, header_of);
    idle = lane.match.Idle();
    past_prefix = lane.phase != Phase::kPrefix;
  }
  advance();
}

void DeltaPart::OnEvent(const TraceEvent& event) {
  BlockExpander& expander = expansion_->expander;
  const int32_t key = DeltaProfiler::LaneId(event.header, owner_.options_.per_thread);
  auto header_of = [&]() -> const EventHeader& { return event.header; };
  if (const auto* block = std::get_if<ExecBlock>(&event.body)) {
    Block(LaneOf(key, event.header), key, block->insns, block->mode,
          expander.Find(block->first_ip, block->insns, block->mode), header_of);
  } else if (const auto* insn = std::get_if<Instruction>(&event.body)) {
    Block(LaneOf(key, event.header), key, 1, insn->mode, expander.Find(insn->ip, 1, insn->mode),
          header_of);
  } else if (std::holds_alternative<TraceGap>(event.body)) {
    Lane& lane = LaneOf(key, event.header);
    matcher_.Reset(lane.match);
    if (lane.phase == Phase::kKnown) {
      local_->OnGap(event.header);
      return;
    }
    // Fold drops what was open: from here on nothing is, and the matchers agree.
    lane.phase = Phase::kKnown;
    Record gap;
    gap.kind = Record::Kind::kGap;
    gap.lane = key;
    gap.header = event.header;
    records_.push_back(gap);
  }
}

std::unique_ptr<EventSink> DeltaProfiler::NewPart() const {
  return std::make_unique<DeltaPart>(*this);
}

std::unique_ptr<DeltaProfiler> DeltaProfiler::LocalProfile() const {
  return std::unique_ptr<DeltaProfiler>(new DeltaProfiler(images_, open_, close_, matcher_, options_));
}

std::unique_ptr<DeltaProfiler::Expansion> DeltaProfiler::BorrowExpansion() const {
  std::lock_guard<std::mutex> lock(spare_mutex_);
  // The one this thread had, warm in its cache; else any; else a new one.
  const std::thread::id self = std::this_thread::get_id();
  auto mine = std::find_if(spare_.begin(), spare_.end(),
                           [&](const auto& spare) { return spare.first == self; });
  if (mine == spare_.end() && !spare_.empty()) mine = spare_.end() - 1;
  if (mine == spare_.end()) return std::make_unique<Expansion>(images_, matcher_);
  std::unique_ptr<Expansion> expansion = std::move(mine->second);
  spare_.erase(mine);
  return expansion;
}

void DeltaProfiler::ReturnExpansion(std::unique_ptr<Expansion> expansion) const {
  std::lock_guard<std::mutex> lock(spare_mutex_);
  spare_.emplace_back(std::this_thread::get_id(), std::move(expansion));
}

uint64_t DeltaProfiler::decoded_instructions() const {
  std::lock_guard<std::mutex> lock(spare_mutex_);
  uint64_t decoded = own_.classifier.decoded();
  for (const auto& [thread, expansion] : spare_) decoded += expansion->classifier.decoded();
  return decoded;
}

uint64_t DeltaProfiler::disassembled_instructions() const {
  std::lock_guard<std::mutex> lock(spare_mutex_);
  uint64_t disassembled = own_.classifier.disassembled();
  for (const auto& [thread, expansion] : spare_) disassembled += expansion->classifier.disassembled();
  return disassembled;
}

void DeltaProfiler::Fold(std::unique_ptr<EventSink> part) {
  const auto& taken = static_cast<const DeltaPart&>(*part);
  const DeltaProfiler& local = taken.local();
  // Where each lane of the piece began: local positions count from there.
  std::map<int32_t, uint64_t> base;
  for (const auto& [key, lane] : taken.lanes()) base[key] = LaneOf(lane.header).position;
  // A local interval as this profile has it: numbered in closing order, positions in the lane,
  // the lane's CPU and thread where its events did not say.
  auto place = [&](Interval interval, uint64_t id) {
    interval.id = id;
    interval.open_position += base[interval.lane];
    interval.close_position += base[interval.lane];
    const Lane& lane = lanes_.at(interval.lane);
    if (interval.cpu == DeltaPart::kLaneDefault) interval.cpu = lane.cpu;
    if (interval.tid == DeltaPart::kLaneDefault) interval.tid = lane.tid;
    return interval;
  };
  // The numbers in this profile of the part's longest intervals (all its intervals are kept
  // whole only with keeping.all, and then numbered as they are placed): local id -> id, worked
  // out as the records go by.
  std::vector<std::pair<uint64_t, uint64_t>> ids;
  for (const Interval& interval : local.longest_by_time_) ids.emplace_back(interval.id, 0);
  for (const Interval& interval : local.longest_by_insns_) ids.emplace_back(interval.id, 0);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  size_t next_id = 0;  // the first of `ids` not numbered yet
  auto id_of = [&](uint64_t local_id) {
    return std::lower_bound(ids.begin(), ids.end(), std::pair<uint64_t, uint64_t>(local_id, 0))
        ->second;
  };
  uint64_t next_interval = 0;  // local intervals numbered so far
  const std::vector<BlockHit>& hits = taken.hits();
  using Kind = DeltaPart::Record::Kind;
  for (const DeltaPart::Record& record : taken.records()) {
    switch (record.kind) {
      case Kind::kAdvance:
        Advance(LaneOf(record.header), record.insns);
        break;
      case Kind::kBlock:
        MatchBlock(LaneOf(record.header), record.header, static_cast<uint32_t>(record.insns),
                   record.mode,
                   std::span<const BlockHit>(hits).subspan(record.hits_begin,
                                                           record.hits_end - record.hits_begin),
                   record.expanded);
        break;
      case Kind::kMatch: {
        Lane& lane = LaneOf(record.header);
        OnMatch(lane, record.header, record.ip, base[record.lane] + record.insns, record.mode,
                record.matched[0], record.matched[1]);
        break;
      }
      case Kind::kGap:
        OnGap(record.header);
        break;
      case Kind::kIntervals: {
        // Local intervals next_interval + 1 to next_interval + record.insns closed here.
        const uint64_t first = counts_.intervals + 1;
        for (; next_id < ids.size() && ids[next_id].first <= next_interval + record.insns;
             ++next_id)
          ids[next_id].second = first + (ids[next_id].first - next_interval - 1);
        if (options_.keeping.all)
          for (uint64_t i = 0; i < record.insns; ++i)
            intervals_.push_back(place(local.intervals_[next_interval + i], first + i));
        counts_.intervals += record.insns;
        next_interval += record.insns;
        break;
      }
    }
  }
  // The values of the intervals the part closed: tallies, whose merge is exact in any order.
  instruction_values_.Merge(local.instruction_values_);
  time_values_.Merge(local.time_values_);
  const DeltaCounts& more = local.counts_;
  counts_.nested_openers += more.nested_openers;
  counts_.dropped_at_gap += more.dropped_at_gap;
  counts_.closers_without_opener += more.closers_without_opener;
  counts_.gaps += more.gaps;
  counts_.intervals_without_time += more.intervals_without_time;
  for (int p = 0; p < 2; ++p)
    for (size_t a = 0; a < counts_.matches[p].size(); ++a)
      counts_.matches[p][a] += more.matches[p][a];
  counts_.instructions += taken.settled_instructions();
  counts_.unexpanded_instructions += taken.settled_unexpanded();
  // The longest: those of the part are among its own longest. By time only while every
  // interval has a time (as KeepIfLongest is offered them one by one).
  if (counts_.intervals_without_time == 0) {
    for (const Interval& interval : local.longest_by_time_)
      KeepIfLongest(longest_by_time_, place(interval, id_of(interval.id)), true);
  } else {
    longest_by_time_ = {};
  }
  for (const Interval& interval : local.longest_by_insns_)
    KeepIfLongest(longest_by_insns_, place(interval, id_of(interval.id)), false);
  // The lanes moved on by all of their instructions in the piece. Past their prefixes, the part's
  // matchers are in the lanes' real states; where it knew what was open, so are its lanes'
  // intervals.
  for (const auto& [key, part_lane] : taken.lanes()) {
    Lane& lane = LaneOf(part_lane.header);
    lane.position = base[key] + part_lane.book->position;
    if (part_lane.phase != DeltaPart::Phase::kPrefix) lane.match = part_lane.match;
    if (part_lane.phase != DeltaPart::Phase::kKnown) continue;
    lane.open = part_lane.book->open;
    if (lane.open) lane.open->position += base[key];
  }
}

}  // namespace ptprof::delta
