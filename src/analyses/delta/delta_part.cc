#include "src/analyses/delta/delta_part.h"

#include <algorithm>

namespace ptprof::delta {

DeltaPart::DeltaPart(const DeltaProfiler& owner)
    : owner_(owner),
      matcher_(owner.matcher_),
      horizon_(owner.matcher_.Horizon()),
      expansion_(owner.BorrowExpansion()),
      matched_(owner.matcher_.pattern_count(), -1) {}

DeltaPart::~DeltaPart() { OnEnd(); }

void DeltaPart::OnEnd() {
  if (expansion_) owner_.ReturnExpansion(std::move(expansion_));
}

DeltaPart::Lane& DeltaPart::LaneOf(int32_t key, const EventHeader& header) {
  if (last_lane_ && key == last_key_) return *last_lane_;
  auto [it, inserted] = lanes_.try_emplace(key);
  if (inserted) {
    it->second.header = header;
    it->second.match = matcher_.NewState();
  }
  last_key_ = key;
  last_lane_ = &it->second;
  return it->second;
}

void DeltaPart::Move(int32_t key, const EventHeader& lane_header, uint64_t insns,
                     uint64_t unexpanded) {
  if (!records_.empty() && records_.back().kind == Record::Kind::kMove &&
      records_.back().lane == key) {
    records_.back().insns += insns;
    records_.back().unexpanded += unexpanded;
    return;
  }
  Record move;
  move.kind = Record::Kind::kMove;
  move.lane = key;
  move.insns = insns;
  move.unexpanded = unexpanded;
  move.header = lane_header;
  records_.push_back(move);
}

template <typename HeaderOf>
void DeltaPart::Block(int32_t key, const EventHeader& lane_header, uint32_t insns, ExecMode mode,
                      BlockExpander::Seen& seen, const HeaderOf& header_of) {
  Lane& lane = LaneOf(key, lane_header);
  if (!lane.settled && lane.insns >= horizon_) lane.settled = true;
  lane.insns += insns;
  if (!lane.settled) {
    // In the prefix: kept for Fold, and our own matcher goes along.
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
    uint32_t done = 0;
    for (const BlockHit& hit : expanded.hits) {
      if (hit.index > done) matcher_.Skip(lane.match, hit.index - done);
      matcher_.Step(lane.match, hit.atoms, matched_);
      done = hit.index + 1;
    }
    if (expanded.expanded > done) matcher_.Skip(lane.match, expanded.expanded - done);
    if (expanded.expanded < insns) {
      // Fold restarts the lane's matcher here too: from now on both agree.
      matcher_.Reset(lane.match);
      lane.settled = true;
    }
    return;
  }
  // Past the prefix: matched here, as DeltaProfiler::OnBlocks and OnBlock do.
  const bool idle = lane.match.Idle();
  if (seen.plain || (idle && DeltaProfiler::IsQuiet(matcher_, seen, insns, matched_))) {
    Move(key, lane.header, insns, 0);
    if (!idle) matcher_.Skip(lane.match, insns);
    return;
  }
  const ExpandedBlock& expanded = *seen.block;
  uint32_t done = 0;
  for (const BlockHit& hit : expanded.hits) {
    if (hit.index > done) matcher_.Skip(lane.match, hit.index - done);
    if (matcher_.Step(lane.match, hit.atoms, matched_)) {
      Record match;
      match.kind = Record::Kind::kMatch;
      match.mode = mode;
      match.lane = key;
      for (size_t p = 0; p < matched_.size() && p < 2; ++p)
        match.matched[p] = matched_[p];
      match.insns = hit.index;
      match.ip = hit.ip;
      match.header = header_of();
      records_.push_back(match);
    }
    done = hit.index + 1;
  }
  if (expanded.expanded > done) matcher_.Skip(lane.match, expanded.expanded - done);
  uint64_t unexpanded = 0;
  if (expanded.expanded < insns) {
    unexpanded = insns - expanded.expanded;
    matcher_.Reset(lane.match);
  }
  Move(key, lane.header, insns, unexpanded);
}

void DeltaPart::OnBlocks(const BlockBatch& batch) {
  if (batch.blocks.empty()) return;
  BlockExpander& expander = expansion_->expander;
  const EventHeader shared = batch.Header();
  const int32_t key = DeltaProfiler::LaneId(shared, owner_.options_.per_thread);
  TraceEvent event{EventHeader{}, ExecBlock{}};
  for (size_t i = 0; i < batch.blocks.size(); ++i) {
    const PackedEvent& p = batch.blocks[i];
    const ExecMode mode = static_cast<ExecMode>(p.mode);
    Block(key, shared, p.insns, mode, expander.Find(p.first_ip_or_index, p.insns, mode),
          [&]() -> const EventHeader& {
            batch.Unpack(i, event);
            return event.header;
          });
  }
}

void DeltaPart::OnEvent(const TraceEvent& event) {
  BlockExpander& expander = expansion_->expander;
  const int32_t key = DeltaProfiler::LaneId(event.header, owner_.options_.per_thread);
  auto header_of = [&]() -> const EventHeader& { return event.header; };
  if (const auto* block = std::get_if<ExecBlock>(&event.body)) {
    Block(key, event.header, block->insns, block->mode,
          expander.Find(block->first_ip, block->insns, block->mode), header_of);
  } else if (const auto* insn = std::get_if<Instruction>(&event.body)) {
    Block(key, event.header, 1, insn->mode, expander.Find(insn->ip, 1, insn->mode), header_of);
  } else if (std::holds_alternative<TraceGap>(event.body)) {
    Lane& lane = LaneOf(key, event.header);
    matcher_.Reset(lane.match);
    lane.settled = true;  // Fold restarts the lane's matcher here too
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

void DeltaProfiler::Fold(std::unique_ptr<EventSink> part) {
  const auto& taken = static_cast<const DeltaPart&>(*part);
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
      case Kind::kMove: {
        Lane& lane = LaneOf(record.header);
        counts_.instructions += record.insns;
        counts_.unexpanded_instructions += record.unexpanded;
        lane.position += record.insns;
        break;
      }
      case Kind::kMatch: {
        Lane& lane = LaneOf(record.header);
        matched_.assign(matcher_.pattern_count(), -1);
        for (size_t p = 0; p < matched_.size() && p < 2; ++p) matched_[p] = record.matched[p];
        OnMatch(lane, record.header, record.ip, lane.position + record.insns, record.mode);
        break;
      }
      case Kind::kGap:
        OnGap(record.header);
        break;
    }
  }
  // Past their prefixes, the part's matchers are in the lanes' real states.
  for (const auto& [key, lane] : taken.lanes())
    if (lane.settled) LaneOf(lane.header).match = lane.match;
}

}  // namespace ptprof::delta
