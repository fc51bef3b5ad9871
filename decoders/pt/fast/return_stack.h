#pragma once
// The fast engine's stack of return addresses for compressed returns, kept as libipt's block
// decoder keeps its own (a ring of 64: a 65th push overwrites the oldest), and what a TNT run's
// key may hold of it: its two top addresses (fast/tnt_runs.h).
#include <cstdint>

namespace ptprof::pt::fast {

// The top of the caller's return stack where a run is looked for: its two top addresses, and
// how many of them there are.
struct CallerTops {
  uint64_t top = 0;
  uint64_t second = 0;
  uint8_t depth = 0;  // 0, 1, or 2 for two or more
};

class ReturnStack {
 public:
  static constexpr uint32_t kSize = 64;

  void Clear() { top_ = depth_ = 0; }
  bool Empty() const { return depth_ == 0; }
  void Push(uint64_t ip) {
    entries_[top_ % kSize] = ip;  // over the oldest when full
    ++top_;
    depth_ = depth_ < kSize ? depth_ + 1 : kSize;
  }
  // The top address; not Empty().
  uint64_t Top() const { return entries_[(top_ - 1) % kSize]; }
  // Takes the top address off; not Empty().
  uint64_t Pop() {
    --top_;
    --depth_;
    return entries_[top_ % kSize];
  }
  // The two top addresses, as a run's key may hold them.
  CallerTops Caller() const {
    CallerTops caller;
    if (Empty()) return caller;
    caller.top = entries_[(top_ - 1) % kSize];
    caller.depth = 1;
    if (depth_ > 1) {
      caller.second = entries_[(top_ - 2) % kSize];
      caller.depth = 2;
    }
    return caller;
  }

 private:
  // A ring of kSize slots (a power of two): the top address in slot (top_ - 1) % kSize, depth_
  // addresses below it, the oldest overwritten by a push when it is full.
  uint64_t entries_[kSize] = {};
  uint32_t top_ = 0;    // counts on past kSize; only its slot matters
  uint32_t depth_ = 0;  // at most kSize
};

}  // namespace ptprof::pt::fast
