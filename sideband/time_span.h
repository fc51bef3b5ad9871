#pragma once
// TimeSpan: the perf-clock times [from, until) over which an answer the sideband gave for one
// time holds (who ran on a CPU, which address space a process had), so that a caller asking
// again at another time in it can keep the answer it has.
#include <algorithm>
#include <cstdint>

namespace ptprof {

struct TimeSpan {
  uint64_t from = 0;
  uint64_t until = UINT64_MAX;  // UINT64_MAX: no end known

  bool Holds(uint64_t time) const { return from <= time && time < until; }
  // The times both spans hold.
  TimeSpan And(const TimeSpan& other) const {
    return TimeSpan{std::max(from, other.from), std::min(until, other.until)};
  }
  bool operator==(const TimeSpan&) const = default;
};

}  // namespace ptprof
