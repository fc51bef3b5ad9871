#pragma once
// TscSpan: the trace times (TSC values) [first, last] over which an answer about the trace's
// tasks holds (who runs, with which code), so that a decoder can keep the answer while its time
// stays in them instead of asking again.
#include <cstdint>

namespace ptprof::pt {

struct TscSpan {
  uint64_t first = 1;
  uint64_t last = 0;  // first > last: no time at all

  static TscSpan At(uint64_t tsc) { return TscSpan{tsc, tsc}; }
  bool Holds(uint64_t tsc) const { return first <= tsc && tsc <= last; }
  bool operator==(const TscSpan&) const = default;
};

}  // namespace ptprof::pt
