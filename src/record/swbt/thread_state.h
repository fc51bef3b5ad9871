#pragma once
// ThreadState answers "where is this thread's tracing at?": its perf events, the burst in
// progress (the branch the breakpoint sits on, the stack pointer expected there), its burst
// buffer, decode cache and counters. One preallocated slot per traced thread; only the thread
// itself touches it, from its signal handler, except at process exit (see `busy`).
#include <linux/perf_event.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "decoders/lbr/swbt_bursts.h"
#include "src/record/swbt/branch_desc.h"
#include "src/record/swbt/counters.h"
#include "src/record/swbt/decode_ahead.h"

namespace ptprof::swbt {

// Break Dancing's 16 KB per thread, or two of the longest bursts (--lbr-depth 1024) when larger.
inline constexpr size_t kMaxBurstRecord = kSwbtBurstHeaderSize + kSwbtMaxDepth * kSwbtBranchSize;
inline constexpr size_t kBurstBufferSize = 16384 > 2 * kMaxBurstRecord ? 16384 : 2 * kMaxBurstRecord;

struct ThreadState {
  std::atomic<int> in_use{0};     // the slot is taken (CAS by the attaching thread)
  std::atomic<int> attached{0};   // the handlers may act (cleared before the slot is torn down)
  std::atomic<int> busy{0};       // a handler is running on the thread
  int tid = 0;
  int sampler_fd = -1;
  int breakpoint_fd = -1;
  perf_event_attr breakpoint_attr{};

  // The burst in progress.
  bool active = false;
  bool breakpoint_enabled = false;
  BranchDesc armed;               // the branch the breakpoint is on
  bool rsp_known = false;
  uint64_t expected_rsp = 0;
  uint32_t progress = 0;          // breakpoints hit in this burst
  uint32_t progress_at_sample = 0;
  uint32_t count = 0;
  uint64_t start_pc = 0;
  uint64_t time_ns = 0;
  uint64_t branches[2 * kSwbtMaxDepth];  // from, to, from, to, ...

  // Encoded burst records waiting for a write(2).
  size_t used = 0;
  uint64_t last_flush_ns = 0;
  uint8_t buffer[kBurstBufferSize];

  TracerCounters counters;
  DecodeCache cache;
};

}  // namespace ptprof::swbt
