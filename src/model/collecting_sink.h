#pragma once
// For tests: a sink that keeps every event it is given, in order, and whether its stream ended.
#include <vector>

#include "src/model/event_sink.h"

namespace ptprof::testing {

struct CollectingSink : EventSink {
  std::vector<TraceEvent> events;
  bool ended = false;
  void OnEvent(const TraceEvent& event) override { events.push_back(event); }
  void OnEnd() override { ended = true; }
};

}  // namespace ptprof::testing
