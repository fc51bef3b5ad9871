#include "src/analyses/crossval/flow_edges.h"

#include <algorithm>
#include <variant>

#include "src/model/block_batch.h"

namespace ptprof {

FlowEdges::FlowEdges(const AddressNormaliser& normaliser)
    : FlowEdges(normaliser, std::make_shared<Shared>(), false, std::make_unique<Cache>()) {}

FlowEdges::Thread& FlowEdges::ThreadOf(int64_t thread) {
  if (thread == cached_thread_) return *cached_;
  auto [it, added] = threads_.try_emplace(thread);
  if (added && part_) it->second.run_inherited = it->second.last_inherited = true;
  cached_thread_ = thread;
  cached_ = &it->second;
  return it->second;
}

void FlowEdges::OnEvent(const TraceEvent& event) {
  const EventHeader& h = event.header;
  if (const auto* block = std::get_if<ExecBlock>(&event.body)) {
    Block(ThreadOf(FlowThread(h.cpu, h.tid)), h.pid, block->first_ip, block->last_ip, block->end);
  } else if (BreaksBranchRun(event)) {
    EventBreak(ThreadOf(FlowThread(h.cpu, h.tid)));
  }
}

void FlowEdges::OnBlocks(const BlockBatch& batch) {
  Thread& t = ThreadOf(FlowThread(batch.cpu, batch.tid));
  for (const PackedEvent& b : batch.blocks)
    Block(t, batch.pid, b.first_ip_or_index, b.first_ip_or_index + b.span, static_cast<BlockEnd>(b.end));
}

inline void FlowEdges::Block(Thread& t, int32_t pid, uint64_t first_ip, uint64_t last_ip, BlockEnd end) {
  if (!t.seen) {
    t.seen = true;
    t.lead_ip = first_ip;
  }
  const BlockEndRole role = t.pending.Follow(
      first_ip, last_ip, end, [&](uint64_t from, uint64_t to) { Branch(t, t.pid, from, to); });
  if (role == BlockEndRole::kTaken) t.pid = pid;
  if (role == BlockEndRole::kBreaks) Break(t);
}

void FlowEdges::EventBreak(Thread& t) {
  if (!t.seen) {
    t.seen = true;
    t.lead_break = true;
  }
  t.pending.taken = false;
  Break(t);
}

void FlowEdges::OnEnd() {
  if (part_) {  // its end is not the stream's; the next part on this thread takes its cache
    if (!cache_) return;
    std::lock_guard lock(shared_->mutex);
    shared_->idle.push_back(std::move(cache_));
    return;
  }
  for (auto& [thread, t] : threads_) {
    t.pending.taken = false;
    Break(t);
  }
}

void FlowEdges::AddBranch(int64_t thread, int32_t pid, uint64_t from, uint64_t to) {
  Branch(ThreadOf(thread), pid, from, to);
}

void FlowEdges::AddBreak(int64_t thread) { Break(ThreadOf(thread)); }

uint32_t FlowEdges::EdgeOf(int32_t pid, uint64_t from, uint64_t to) {
  auto [edge, added] = cache_->edge_of.TryEmplace(BranchKey{pid, from, to}, kNoEdge);
  if (added) {
    auto f = normaliser_.Normalise(pid, from);
    auto t = normaliser_.Normalise(pid, to);
    if (f && t) {
      Location source, target;
      uint32_t id;
      {
        std::lock_guard lock(shared_->mutex);
        EdgeTable& table = shared_->table;
        source = table.Locate(*f);
        target = table.Locate(*t);
        id = table.EdgeId(source, target, true);
      }
      *edge = id;
      auto& ends = cache_->ends;
      if (id >= ends.size()) ends.resize(id + 1, {Location{kNoImage, 0}, Location{kNoImage, 0}});
      ends[id] = {source, target};
    }
  }
  return *edge;
}

uint32_t FlowEdges::RangeOf(uint32_t last, uint32_t id) {
  auto [cached, added] = cache_->range_of.TryEmplace(uint64_t{last} << 32 | id, kNoRange);
  if (!added) return *cached;
  // The ends of both edges, from this cache when it numbered them, else (a fold's cache, which
  // did not number the part's edges) from the table, under the lock.
  const auto& ends = cache_->ends;
  const bool known = last < ends.size() && id < ends.size() &&
                     ends[last].second.image != kNoImage && ends[id].first.image != kNoImage;
  std::unique_lock lock(shared_->mutex, std::defer_lock);
  if (!known) lock.lock();
  const Location begin = known ? ends[last].second : shared_->table.Edge(last).second;
  const Location end = known ? ends[id].first : shared_->table.Edge(id).first;
  if (begin.image != end.image || end.offset < begin.offset) return kNoRange;
  const RangeKey key{end.image, begin.offset, end.offset};
  if (!lock.owns_lock()) lock.lock();
  const auto next = static_cast<uint32_t>(shared_->ranges.size());
  auto [range, made] = shared_->range_at.TryEmplace(key, next);
  if (made) shared_->ranges.push_back(key);
  return *cached = *range;
}

std::vector<FlowEdges::RangeCount> FlowEdges::Ranges() const {
  std::lock_guard lock(shared_->mutex);
  std::vector<RangeCount> ranges;
  const SourcedCounts& counted = range_counts_;
  for (uint32_t r = 0; r < counted.counts.size(); ++r)
    if (counted.counts[r]) ranges.push_back({shared_->ranges[r], counted.counts[r], counted.sources[r]});
  return ranges;
}

inline void FlowEdges::Branch(Thread& t, int32_t pid, uint64_t from, uint64_t to) {
  uint32_t id, range = kNoRange;
  auto& follows = cache_->follow;
  if (t.last != kNoEdge && t.last >= follows.size()) follows.resize(t.last + 1);
  Follow* follow = t.last != kNoEdge ? follows[t.last].data() : nullptr;
  if (follow && follow[0].from == from && follow[0].to == to && follow[0].pid == pid) {
    id = follow[0].edge;
    range = follow[0].range;
  } else if (follow && follow[1].from == from && follow[1].to == to && follow[1].pid == pid) {
    id = follow[1].edge;
    range = follow[1].range;
    std::swap(follow[0], follow[1]);  // the most recent first
  } else {
    id = EdgeOf(pid, from, to);
    if (id == kNoEdge) {
      ++unmapped_;
      Break(t);
      return;
    }
    if (follow) {
      range = RangeOf(t.last, id);
      follow[1] = follow[0];
      follow[0] = {from, to, pid, id, range};
    }
  }
  ++t.open;
  if (matcher_) {
    if (t.run_inherited && t.head.size() < matcher_->longest()) t.head.push_back(id);
    t.state = matcher_->Step(t.state, id);
  }
  ++branches_;
  edge_counts_.Add(id, from, 1);
  if (range != kNoRange) range_counts_.Add(range, from, 1);
  if (t.last_inherited) {
    t.last_inherited = false;
    t.first_edge = id;
    t.first_source = from;
  }
  t.last = id;
}

void FlowEdges::CloseRun(Thread& t) {
  if (t.open == 0) return;
  t.open = 0;
  ++runs_;
}

void FlowEdges::Break(Thread& t) {
  if (t.run_inherited) {
    t.lead_edges = t.open;
    t.open = 0;
    t.run_inherited = false;
  } else {
    CloseRun(t);
  }
  t.last_inherited = false;
  t.last = kNoEdge;
  t.state = BurstMatcher::kRoot;
}

std::unique_ptr<EventSink> FlowEdges::NewPart() const {
  std::unique_ptr<Cache> cache;
  std::pair<SourcedCounts, SourcedCounts> counts;
  {
    std::lock_guard lock(shared_->mutex);
    if (!shared_->idle.empty()) {
      cache = std::move(shared_->idle.back());
      shared_->idle.pop_back();
    }
    if (!shared_->spare_counts.empty()) {
      counts = std::move(shared_->spare_counts.back());
      shared_->spare_counts.pop_back();
    }
  }
  if (!cache) cache = std::make_unique<Cache>();
  auto part = std::unique_ptr<FlowEdges>(new FlowEdges(normaliser_, shared_, true, std::move(cache)));
  part->matcher_ = matcher_;
  part->edge_counts_ = std::move(counts.first);
  part->range_counts_ = std::move(counts.second);
  return part;
}

void FlowEdges::Fold(std::unique_ptr<EventSink> part_sink) {
  auto& part = static_cast<FlowEdges&>(*part_sink);
  edge_counts_.Take(part.edge_counts_);
  range_counts_.Take(part.range_counts_);
  {
    std::lock_guard lock(shared_->mutex);
    shared_->spare_counts.emplace_back(std::move(part.edge_counts_), std::move(part.range_counts_));
  }
  branches_ += part.branches_;
  runs_ += part.runs_;
  unmapped_ += part.unmapped_;

  for (auto& [thread, p] : part.threads_) {
    Thread& t = ThreadOf(thread);
    // What came before the part ends at its first event: a branch into its first block, a break.
    if (p.lead_break) {
      t.pending.taken = false;
      Break(t);
    } else if (t.pending.taken) {
      Branch(t, t.pid, t.pending.from, p.lead_ip);
    }
    // The part's first branch ends the range that began at the stream's last target.
    if (p.first_edge != kNoEdge && t.last != kNoEdge)
      if (const uint32_t range = RangeOf(t.last, p.first_edge); range != kNoRange)
        range_counts_.Add(range, p.first_source, 1);
    // Bursts across the seam: the part's first edges, read again from the stream's state. The
    // state after the part is the part's own, unless the part's edges since its start, with no
    // break, are fewer than a burst may hold (then the stream's state went on through them all).
    BurstMatcher::State state = p.state;
    if (matcher_ && !p.lead_break) {
      BurstMatcher::State seam = t.state;
      for (const uint32_t id : p.head) seam = matcher_->Step(seam, id);
      if (p.run_inherited && p.head.size() < matcher_->longest()) state = seam;
    }
    t.state = state;
    // The stream's run goes on with the part's first run; the part's last run stays open.
    if (p.run_inherited) {
      t.open += p.open;
    } else {
      t.open += p.lead_edges;
      CloseRun(t);
      t.open = p.open;
    }
    if (!p.last_inherited) t.last = p.last;
    t.pending = p.pending;
    t.pid = p.pid;
  }
}

}  // namespace ptprof
