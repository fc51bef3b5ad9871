#pragma once
// EventClock answers "when, in a profile's unit, did this event happen?" from its header: its ns
// time where the decode gave one (when `ns_first`), else its TSC times `per_tick`; nothing
// without either, or without a clock. A value rather than a function, so that a profile that
// reads it at every interval's two ends pays no indirect call.
#include <functional>
#include <optional>

#include "src/model/trace_event.h"

namespace ptprof {

struct EventClock {
  bool known = false;  // false: no clock; no event has a time
  bool ns_first = false;
  double per_tick = 1;

  // The TSC in its own ticks, scaled by `per_tick`.
  static EventClock Ticks(double per_tick = 1) { return {true, false, per_tick}; }
  // Nanoseconds: the event's ns time, else its TSC at `ns_per_tick`.
  static EventClock Nanoseconds(double ns_per_tick) { return {true, true, ns_per_tick}; }
  // A profile's clock for a trace whose TSC runs at the nominal frequency `nom_freq` x 100 MHz
  // (MSR_PLATFORM_INFO[15:8]; a tick is 10/nom_freq ns): nanoseconds, or TSC ticks when it is
  // not known (0).
  static EventClock OfNominalFrequency(unsigned nom_freq) {
    return nom_freq ? Nanoseconds(10.0 / nom_freq) : Ticks();
  }
  bool in_ns() const { return known && ns_first; }

  std::optional<double> TimeOf(const EventHeader& h) const {
    if (!known) return std::nullopt;
    if (ns_first && h.time_ns != kUnknownTime) return static_cast<double>(h.time_ns);
    if (h.tsc != kUnknownTime) return static_cast<double>(h.tsc) * per_tick;
    return std::nullopt;
  }
  // For the consumers that take a function.
  std::function<std::optional<double>(const EventHeader&)> AsFunction() const {
    return [clock = *this](const EventHeader& h) { return clock.TimeOf(h); };
  }
};

}  // namespace ptprof
