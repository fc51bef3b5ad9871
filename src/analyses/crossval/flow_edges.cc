#include "src/analyses/crossval/flow_edges.h"

#include <algorithm>
#include <variant>

#include "src/analyses/crossval/flow_branches.h"
#include "src/model/block_batch.h"

namespace ptprof {

namespace {

int64_t ThreadKey(int32_t cpu, int32_t tid) { return tid >= 0 ? tid : -1 - static_cast<int64_t>(cpu); }

}  // namespace

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
    Block(ThreadOf(ThreadKey(h.cpu, h.tid)), h.pid, block->first_ip, block->last_ip, block->end);
  } else if (std::holds_alternative<TraceGap>(event.body) ||
             std::holds_alternative<TraceToggle>(event.body)) {
    // Gaps and toggles of a thread break its run; other events do not touch the control flow.
    EventBreak(ThreadOf(ThreadKey(h.cpu, h.tid)));
  }
}

void FlowEdges::OnBlocks(const BlockBatch& batch) {
  Thread& t = ThreadOf(ThreadKey(batch.cpu, batch.tid));
  for (const PackedEvent& b : batch.blocks)
    Block(t, batch.pid, b.first_ip_or_index, b.first_ip_or_index + b.span, static_cast<BlockEnd>(b.end));
}

void FlowEdges::Block(Thread& t, int32_t pid, uint64_t first_ip, uint64_t last_ip, BlockEnd end) {
  if (!t.seen) {
    t.seen = true;
    t.lead_ip = first_ip;
  }
  if (t.taken) Branch(t, t.pid, t.from, first_ip);
  switch (RoleOf(end)) {
    case BlockEndRole::kTaken:
      t.taken = true;
      t.pid = pid;
      t.from = last_ip;
      break;
    case BlockEndRole::kContinues:
      t.taken = false;
      break;
    case BlockEndRole::kBreaks:
      t.taken = false;
      Break(t);
      break;
  }
}

void FlowEdges::EventBreak(Thread& t) {
  if (!t.seen) {
    t.seen = true;
    t.lead_break = true;
  }
  t.taken = false;
  Break(t);
}

void FlowEdges::OnEnd() {
  if (part_) return;
  for (auto& [thread, t] : threads_) {
    t.taken = false;
    Break(t);
  }
}

void FlowEdges::AddBranch(int64_t thread, int32_t pid, uint64_t from, uint64_t to) {
  Branch(ThreadOf(thread), pid, from, to);
}

void FlowEdges::AddBreak(int64_t thread) { Break(ThreadOf(thread)); }

uint32_t FlowEdges::EdgeOf(int32_t pid, uint64_t from, uint64_t to) {
  auto [it, added] = edge_of_.try_emplace(BranchKey{pid, from, to}, kNoEdge);
  if (added) {
    auto f = normaliser_.Normalise(pid, from);
    auto t = normaliser_.Normalise(pid, to);
    if (f && t) it->second = table_.EdgeId(table_.Locate(*f), table_.Locate(*t), true);
  }
  return it->second;
}

void FlowEdges::CountEdge(uint32_t id, uint64_t source, uint64_t n) {
  if (id >= counts_.size()) {
    counts_.resize(id + 1, 0);
    sources_.resize(id + 1, UINT64_MAX);
    follow_.resize(id + 1);
  }
  counts_[id] += n;
  sources_[id] = std::min(sources_[id], source);
}

uint32_t FlowEdges::RangeAt(const RangeKey& range) {
  auto [it, added] = range_at_.try_emplace(range, static_cast<uint32_t>(ranges_.size()));
  if (added) ranges_.push_back({range});
  return it->second;
}

uint32_t FlowEdges::RangeOf(uint32_t last, uint32_t id) {
  const Location begin = table_.Edge(last).second, end = table_.Edge(id).first;
  if (begin.image != end.image || end.offset < begin.offset) return kNoRange;
  return RangeAt({end.image, begin.offset, end.offset});
}

void FlowEdges::CountRange(uint32_t range, uint64_t n, uint64_t source) {
  RangeCount& r = ranges_[range];
  r.count += n;
  r.source = std::min(r.source, source);
}

void FlowEdges::Branch(Thread& t, int32_t pid, uint64_t from, uint64_t to) {
  uint32_t id, range = kNoRange;
  if (t.last != kNoEdge && follow_[t.last].from == from && follow_[t.last].to == to &&
      follow_[t.last].pid == pid) {
    id = follow_[t.last].edge;
    range = follow_[t.last].range;
  } else {
    id = EdgeOf(pid, from, to);
    if (id == kNoEdge) {
      ++unmapped_;
      Break(t);
      return;
    }
    CountEdge(id, from, 0);
    if (t.last != kNoEdge) {
      range = RangeOf(t.last, id);
      follow_[t.last] = {from, to, pid, id, range};
    }
  }
  t.run.push_back(id);
  ++branches_;
  CountEdge(id, from, 1);
  if (range != kNoRange) CountRange(range, 1, from);
  if (t.last_inherited) {
    t.last_inherited = false;
    t.first_edge = id;
    t.first_source = from;
  }
  t.last = id;
}

void FlowEdges::CloseRun(std::vector<uint32_t>& run) {
  if (run.empty()) return;
  sequence_.insert(sequence_.end(), run.begin(), run.end());
  sequence_.push_back(kNoEdge);
  run.clear();
  ++runs_;
}

void FlowEdges::Break(Thread& t) {
  if (t.run_inherited) {
    t.lead_run = std::move(t.run);
    t.run.clear();
    t.run_inherited = false;
  } else {
    CloseRun(t.run);
  }
  t.last_inherited = false;
  t.last = kNoEdge;
}

std::unique_ptr<EventSink> FlowEdges::NewPart() const {
  return std::make_unique<FlowEdges>(normaliser_, true);
}

void FlowEdges::Fold(std::unique_ptr<EventSink> part_sink) {
  auto& part = static_cast<FlowEdges&>(*part_sink);
  // The part's numbers in this table.
  std::vector<uint32_t> image(part.table_.images());
  for (uint32_t i = 0; i < image.size(); ++i) image[i] = table_.ImageId(part.table_.ImageName(i));
  auto locate = [&](Location l) { return Location{image[l.image], l.offset}; };
  std::vector<uint32_t> edge(part.table_.size());
  for (uint32_t i = 0; i < edge.size(); ++i) {
    const auto [from, to] = part.table_.Edge(i);
    edge[i] = table_.EdgeId(locate(from), locate(to), true);
  }
  auto renumber = [&](std::vector<uint32_t>& ids) {
    for (uint32_t& id : ids)
      if (id != kNoEdge) id = edge[id];
  };
  for (uint32_t i = 0; i < part.counts_.size(); ++i)
    if (part.counts_[i]) CountEdge(edge[i], part.sources_[i], part.counts_[i]);
  for (const RangeCount& r : part.ranges_) {
    const auto [img, begin, end] = r.range;
    CountRange(RangeAt({image[img], begin, end}), r.count, r.source);
  }
  renumber(part.sequence_);
  sequence_.insert(sequence_.end(), part.sequence_.begin(), part.sequence_.end());
  branches_ += part.branches_;
  runs_ += part.runs_;
  unmapped_ += part.unmapped_;

  for (auto& [thread, p] : part.threads_) {
    Thread& t = ThreadOf(thread);
    // What came before the part ends at its first event: a branch into its first block, a break.
    if (p.lead_break) {
      t.taken = false;
      Break(t);
    } else if (t.taken) {
      Branch(t, t.pid, t.from, p.lead_ip);
    }
    // The part's first branch ends the range that began at the stream's last target.
    if (p.first_edge != kNoEdge && t.last != kNoEdge) {
      const uint32_t first = edge[p.first_edge];
      if (const uint32_t range = RangeOf(t.last, first); range != kNoRange)
        CountRange(range, 1, p.first_source);
    }
    // The stream's run goes on with the part's first run; the part's last run stays open.
    std::vector<uint32_t>& continued = p.run_inherited ? p.run : p.lead_run;
    renumber(continued);
    t.run.insert(t.run.end(), continued.begin(), continued.end());
    if (!p.run_inherited) {
      CloseRun(t.run);
      renumber(p.run);
      t.run = std::move(p.run);
    }
    if (!p.last_inherited) t.last = p.last == kNoEdge ? kNoEdge : edge[p.last];
    t.taken = p.taken;
    t.pid = p.pid;
    t.from = p.from;
  }
}

}  // namespace ptprof
