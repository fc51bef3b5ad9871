#include "src/record/swbt/counters.h"

namespace ptprof::swbt {

const char* CounterName(Counter counter) {
  static const char* const kNames[] = {
      "samples", "samples_in_burst", "samples_skipped", "bursts", "branches_recorded",
      "static_branches", "dynamic_branches", "dynamic_taken", "breakpoints_set",
      "breakpoint_hits", "decode_cache_hits", "decode_cache_misses", "insns_decoded",
      "foreign_signals", "flushes", "bytes_written", "ticks_sample_handler",
      "ticks_breakpoint_handler", "ticks_decode", "ticks_breakpoint_arm", "ticks_sampler_arm"};
  static_assert(sizeof kNames / sizeof kNames[0] == kEndedFirst);
  if (counter < kEndedFirst) return kNames[counter];
  return nullptr;  // an end reason: SwbtEndReasonName(counter - kEndedFirst)
}

}  // namespace ptprof::swbt
