#pragma once
// BurstMatcher answers "which of these short runs of edge numbers (the bursts of branch records
// `ptprof validate` checks) occur contiguously in the decoded flow?" while the flow goes by, one
// taken branch at a time, so that the flow's edges need not be kept to look the bursts up
// afterwards (4 bytes a branch, and as much again for an index: cc1's 27 M branches took 220 MB).
// It is an Aho-Corasick automaton over edge numbers: a trie of the bursts, each node also linked
// to the longest proper suffix of its path that is a node too (its failure link), and to the
// nearest node down that chain where a burst ends (its output link). A state is a trie node: the
// longest suffix of the flow read so far that begins some burst. A step reads one edge; a burst
// is found when a step reaches its end node or a node whose output chain holds it.
//
// The state after any flow depends only on its last longest() edges, which is what lets a flow cut
// into parts be matched part by part (FlowEdges): a part starts from the root, and where it goes
// on with the stream before it, its first longest() edges are read again from the stream's state.
//
// Built once, before the flow (single thread); Step may then run on several threads at once: what
// it writes is the found marks, each set once and never cleared, and each node's memo of its last
// step, one word (relaxed atomics).
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "src/model/huge_allocator.h"

namespace ptprof {

class BurstMatcher {
 public:
  using State = uint32_t;
  static constexpr State kRoot = 0;
  static constexpr uint32_t kNone = UINT32_MAX;

  BurstMatcher();
  BurstMatcher(const BurstMatcher&) = delete;
  BurstMatcher& operator=(const BurstMatcher&) = delete;

  // Adds a burst (edge numbers below kNone - 1, at least one) before Build; returns its number,
  // the same for a burst equal to one added before.
  uint32_t Add(std::span<const uint32_t> burst);
  // After the last Add, before the first Step: the failure and output links.
  void Build();

  size_t bursts() const { return end_of_.size(); }
  // The most edges a burst holds (0: none added).
  uint32_t longest() const { return longest_; }

  // The state after `edge` is taken in `state`; every burst that ends there is marked found.
  // A flow's loops take the same steps again and again: each node remembers its last two steps
  // (the edge and where the failure links led: a conditional branch goes one of two ways),
  // written once the bursts that end there are marked, so a step repeated costs one read and
  // marks nothing.
  State Step(State state, uint32_t edge) const {
    if (edge >= in_burst_.size() || !in_burst_[edge]) return kRoot;
    std::atomic<uint64_t>* memo = &last_steps_[2 * size_t{state}];
    const uint64_t latest = memo[0].load(std::memory_order_relaxed);
    if (static_cast<uint32_t>(latest >> 32) == edge) return static_cast<State>(latest);
    const uint64_t earlier = memo[1].load(std::memory_order_relaxed);
    if (static_cast<uint32_t>(earlier >> 32) == edge) return static_cast<State>(earlier);
    const State next = Walk(state, edge);
    Report(next);
    memo[1].store(latest, std::memory_order_relaxed);
    memo[0].store(uint64_t{edge} << 32 | next, std::memory_order_relaxed);
    return next;
  }
  // Whether burst `id` was found by a Step (on any thread; read after those threads are joined).
  bool Found(uint32_t id) const { return reported_[end_of_[id]].load(std::memory_order_relaxed) != 0; }

 private:
  // Step's state, by the trie and the failure links.
  State Walk(State state, uint32_t edge) const {
    for (;;) {
      if (const State next = Child(state, edge); next != kNone) return next;
      if (state == kRoot) return kRoot;
      state = fail_[state];
    }
  }
  // The child of `node` by `edge`, kNone when the trie has none. A burst's nodes past where it
  // leaves the bursts added before are made one after the other, so most nodes have one child,
  // the next node: its edge is kept with the node, and only the other children go to the table.
  State Child(State node, uint32_t edge) const {
    if (next_edge_[node] == edge) return node + 1;
    if (used_ == 0) return kNone;
    const uint64_t key = uint64_t{node} << 32 | edge;
    for (size_t i = Home(key);; i = (i + 1) & mask_) {
      const Slot& slot = slots_[i];
      if (slot.child == kNone) return kNone;
      if (slot.key == key) return slot.child;
    }
  }
  size_t Home(uint64_t key) const {
    return static_cast<size_t>((key * 0x9e3779b97f4a7c15ull) >> shift_);
  }
  State AddChild(State node, uint32_t edge);
  void GrowSlots();
  // Marks the bursts that end at `state` or down its output chain. A node marked had its whole
  // chain marked by the step that marked it (or is having it marked, on another thread, which
  // ends before the results are read), so the walk stops at the first node already marked.
  void Report(State state) const {
    for (State n = burst_at_[state] != kNone ? state : out_[state]; n != kNone; n = out_[n]) {
      if (reported_[n].load(std::memory_order_relaxed)) return;
      reported_[n].store(1, std::memory_order_relaxed);
    }
  }

  struct Slot {
    uint64_t key = 0;  // node << 32 | edge
    State child = kNone;
  };
  // The trie's edges to children other than the next node: open addressing, at most half full.
  std::vector<Slot, HugeAllocator<Slot>> slots_;
  size_t mask_ = 0;
  unsigned shift_ = 64;
  size_t used_ = 0;
  // Per node: the edge to the next node when that is its child (kNone: it is not), its parent
  // and the edge from it, its failure and output links, and the burst that ends there (kNone:
  // none).
  std::vector<uint32_t> next_edge_;
  std::vector<State> parent_;
  std::vector<uint32_t> edge_;
  std::vector<State> fail_, out_;
  std::vector<uint32_t> burst_at_;
  std::unique_ptr<std::atomic<uint8_t>[]> reported_;
  // Per node: its last two steps, the latest first, each edge << 32 | state (kNone << 32: none;
  // edges are below kNone). One word each, so that a thread reads a pair another wrote whole.
  std::unique_ptr<std::atomic<uint64_t>[]> last_steps_;
  std::vector<State> end_of_;      // per burst: its end node
  std::vector<uint8_t> in_burst_;  // per edge number: whether some burst holds it
  uint32_t longest_ = 0;
  bool built_ = false;
};

}  // namespace ptprof
