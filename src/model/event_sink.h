#pragma once
// EventSink is what an analysis or a report implements: it receives the ordered events of one
// decode and is told when the stream ends. A sink that fails records its own error and stays quiet.
#include "src/model/trace_event.h"

namespace ptprof {

class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void OnEvent(const TraceEvent& event) = 0;
  virtual void OnEnd() {}
};

}  // namespace ptprof
