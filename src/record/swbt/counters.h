#pragma once
// TracerCounters answers "what did the tracer do and what did it cost?": per-thread event counts
// and handler time (in TSC ticks), summed over threads for swbt_counters.json (docs/swbt.md).
// Plain integers: each thread only touches its own set, in its own signal handler.
#include <cstddef>
#include <cstdint>

#include "decoders/lbr/swbt_bursts.h"

namespace ptprof::swbt {

enum Counter : size_t {
  kSamples,            // sampling signals handled
  kSamplesInBurst,     // ... that arrived while a burst was still progressing (no new burst)
  kSamplesSkipped,     // ... that interrupted the tracer's own code
  kBursts,             // bursts started
  kBranchesRecorded,   // taken branches written
  kStaticBranches,     // branches resolved by decoding alone (direct jmp/call)
  kDynamicBranches,    // branches evaluated at a breakpoint
  kDynamicTaken,       // ... of which taken
  kBreakpointsSet,     // breakpoints armed
  kBreakpointHits,     // breakpoint signals handled
  kDecodeCacheHits,
  kDecodeCacheMisses,
  kInsnsDecoded,
  kForeignSignals,     // the tracer's signal number sent by someone else
  kFlushes,            // write(2)s of the burst buffer
  kBytesWritten,
  kTicksSampleHandler, // TSC ticks inside the sampling handler (decoding and arming included)
  kTicksBreakpointHandler,
  kTicksDecode,        // ... of both spent decoding ahead (cache misses)
  kTicksBreakpointArm, // ... spent moving and arming the breakpoint (ioctls)
  kTicksSamplerArm,    // ... spent re-arming the sampler (ioctl)
  kEndedFirst,         // kEndedFirst + SwbtEndReason: bursts ended for that reason
  kCounterCount = kEndedFirst + static_cast<size_t>(SwbtEndReason::kCount),
};

const char* CounterName(Counter counter);

struct TracerCounters {
  uint64_t value[kCounterCount] = {};
};

}  // namespace ptprof::swbt
