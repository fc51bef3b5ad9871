#pragma once
// RepairCounts answers "how often did a call stack built from a flow need mending?": what
// CallStackBuilder (call_stack.h) counts each time the flow breaks the push/pop picture, summed
// over threads and parts, and printed by `stacks` and `syscalls`.
#include <cstdint>
#include <string>

namespace ptprof {

struct RepairCounts {
  uint64_t stack_starts = 0;        // stacks started at a thread's first block or after a gap
  uint64_t returns_above_start = 0; // synthetic callers added above the outermost frame
  uint64_t tail_calls = 0;
  uint64_t unwinds = 0;             // returns/jumps that popped more than one frame
  uint64_t frames_unwound = 0;      // frames popped by those beyond the first
  uint64_t unmatched_returns = 0;
  uint64_t unmatched_kernel_exits = 0;  // sysret/iret with no syscall/interrupt frame
  uint64_t gap_resets = 0;
  uint64_t untraced_syscalls = 0;   // syscalls whose kernel side is not in the trace
  uint64_t local_calls = 0;         // calls to a label of the same function (retpolines): no frame

  RepairCounts& operator+=(const RepairCounts& more) {
    stack_starts += more.stack_starts;
    returns_above_start += more.returns_above_start;
    tail_calls += more.tail_calls;
    unwinds += more.unwinds;
    frames_unwound += more.frames_unwound;
    unmatched_returns += more.unmatched_returns;
    unmatched_kernel_exits += more.unmatched_kernel_exits;
    gap_resets += more.gap_resets;
    untraced_syscalls += more.untraced_syscalls;
    local_calls += more.local_calls;
    return *this;
  }

  uint64_t Total() const {
    return returns_above_start + tail_calls + unwinds + unmatched_returns +
           unmatched_kernel_exits + gap_resets;
  }
};

// "returns above start 3, tail calls 12, ..." (every field), and one JSON object.
std::string RepairCountsText(const RepairCounts& counts);
std::string RepairCountsJson(const RepairCounts& counts);

}  // namespace ptprof
