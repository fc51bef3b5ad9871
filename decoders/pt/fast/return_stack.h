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
  static constexpr uint8_t kSize = 64;

  void Clear() { top_ = bottom_ = 0; }
  bool Empty() const { return top_ == bottom_; }
  void Push(uint64_t ip) {
    entries_[top_] = ip;
    top_ = top_ == kSize ? 0 : top_ + 1;
    if (bottom_ == top_) bottom_ = bottom_ == kSize ? 0 : bottom_ + 1;
  }
  // The top address; not Empty().
  uint64_t Top() const { return entries_[Below(top_)]; }
  // Takes the top address off; not Empty().
  uint64_t Pop() {
    top_ = Below(top_);
    return entries_[top_];
  }
  // The two top addresses, as a run's key may hold them.
  CallerTops Caller() const {
    CallerTops caller;
    if (Empty()) return caller;
    const uint8_t top = Below(top_);
    caller.top = entries_[top];
    caller.depth = 1;
    if (top != bottom_) {
      caller.second = entries_[Below(top)];
      caller.depth = 2;
    }
    return caller;
  }

 private:
  // The slot before `slot` in the ring.
  static uint8_t Below(uint8_t slot) { return slot ? slot - 1 : kSize; }

  // The addresses in [bottom_, top_), oldest first, around a ring of kSize + 1 slots (one always
  // free).
  uint64_t entries_[kSize + 1] = {};
  uint8_t top_ = 0, bottom_ = 0;
};

}  // namespace ptprof::pt::fast
