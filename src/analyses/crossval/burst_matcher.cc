#include "src/analyses/crossval/burst_matcher.h"

#include <stdexcept>

namespace ptprof {

BurstMatcher::BurstMatcher() {
  // The root alone.
  next_edge_.push_back(kNone);
  parent_.push_back(kRoot);
  edge_.push_back(kNone);
  burst_at_.push_back(kNone);
}

BurstMatcher::State BurstMatcher::AddChild(State node, uint32_t edge) {
  const auto child = static_cast<State>(parent_.size());
  if (child == node + 1) {
    next_edge_[node] = edge;  // (the next node did not exist: the node had no such child)
  } else {
    if ((used_ + 1) * 2 > slots_.size()) GrowSlots();
    const uint64_t key = uint64_t{node} << 32 | edge;
    size_t i = Home(key);
    while (slots_[i].child != kNone) i = (i + 1) & mask_;
    slots_[i] = {key, child};
    ++used_;
  }
  next_edge_.push_back(kNone);
  parent_.push_back(node);
  edge_.push_back(edge);
  burst_at_.push_back(kNone);
  return child;
}

void BurstMatcher::GrowSlots() {
  std::vector<Slot, HugeAllocator<Slot>> old = std::move(slots_);
  slots_.assign(old.empty() ? 1024 : old.size() * 2, Slot{});
  mask_ = slots_.size() - 1;
  shift_ = 64 - static_cast<unsigned>(__builtin_ctzll(slots_.size()));
  for (const Slot& slot : old) {
    if (slot.child == kNone) continue;
    size_t i = Home(slot.key);
    while (slots_[i].child != kNone) i = (i + 1) & mask_;
    slots_[i] = slot;
  }
}

uint32_t BurstMatcher::Add(std::span<const uint32_t> burst) {
  if (built_) throw std::logic_error("BurstMatcher::Add after Build");
  if (burst.empty()) throw std::invalid_argument("BurstMatcher::Add: an empty burst");
  State node = kRoot;
  for (const uint32_t edge : burst) {
    if (edge >= kNone - 1) throw std::invalid_argument("BurstMatcher::Add: no edge number");
    if (edge >= in_burst_.size()) in_burst_.resize(size_t{edge} + 1, 0);
    in_burst_[edge] = 1;
    const State child = Child(node, edge);
    node = child != kNone ? child : AddChild(node, edge);
  }
  if (burst.size() > longest_) longest_ = static_cast<uint32_t>(burst.size());
  if (burst_at_[node] == kNone) {
    burst_at_[node] = static_cast<uint32_t>(end_of_.size());
    end_of_.push_back(node);
  }
  return burst_at_[node];
}

void BurstMatcher::Build() {
  if (built_) return;
  built_ = true;
  const size_t nodes = parent_.size();
  // The nodes by depth (a node comes after its parent, so one pass gives each its depth).
  std::vector<uint32_t> depth(nodes, 0);
  for (size_t n = 1; n < nodes; ++n) depth[n] = depth[parent_[n]] + 1;
  std::vector<size_t> at_depth(size_t{longest_} + 2, 0);
  for (size_t n = 1; n < nodes; ++n) ++at_depth[depth[n] + 1];
  for (size_t d = 1; d < at_depth.size(); ++d) at_depth[d] += at_depth[d - 1];
  std::vector<State> order(nodes > 0 ? nodes - 1 : 0);
  for (size_t n = 1; n < nodes; ++n) order[at_depth[depth[n]]++] = static_cast<State>(n);
  fail_.assign(nodes, kRoot);
  out_.assign(nodes, kNone);
  for (const State v : order) {
    const State u = parent_[v];
    const uint32_t edge = edge_[v];
    State fail = kRoot;
    if (u != kRoot) {
      // The longest proper suffix of u's path that goes on by `edge`.
      for (State f = fail_[u];; f = fail_[f]) {
        if (const State c = Child(f, edge); c != kNone) {
          fail = c;
          break;
        }
        if (f == kRoot) break;
      }
    }
    fail_[v] = fail;
    out_[v] = burst_at_[fail] != kNone ? fail : out_[fail];
  }
  reported_ = std::make_unique<std::atomic<uint8_t>[]>(nodes);
  last_steps_ = std::make_unique<std::atomic<uint64_t>[]>(2 * nodes);
  for (size_t n = 0; n < nodes; ++n) reported_[n].store(0, std::memory_order_relaxed);
  for (size_t n = 0; n < 2 * nodes; ++n)
    last_steps_[n].store(uint64_t{kNone} << 32, std::memory_order_relaxed);
  // Only what Step reads is kept.
  std::vector<State>().swap(parent_);
  std::vector<uint32_t>().swap(edge_);
}

}  // namespace ptprof
