#pragma once
// FanoutSink hands every event of one decode to several sinks in order (a writer and the summary
// statistics, say), so that a trace is decoded once whatever number of consumers it has.
#include <vector>

#include "src/model/event_sink.h"

namespace ptprof {

class FanoutSink : public EventSink {
 public:
  explicit FanoutSink(std::vector<EventSink*> sinks) : sinks_(std::move(sinks)) {}
  void OnEvent(const TraceEvent& event) override {
    for (EventSink* sink : sinks_) sink->OnEvent(event);
  }
  void OnEnd() override {
    for (EventSink* sink : sinks_) sink->OnEnd();
  }

 private:
  std::vector<EventSink*> sinks_;
};

}  // namespace ptprof
