#pragma once
// EventSink is what an analysis or a report implements: it receives the ordered events of one
// decode and is told when the stream ends. A sink that fails records its own error and stays quiet.
#include "src/model/block_batch.h"
#include "src/model/trace_event.h"

namespace ptprof {

class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void OnEvent(const TraceEvent& event) = 0;
  // Blocks in bulk (block_batch.h), in stream order with the events around them. By default each
  // is passed to OnEvent as the TraceEvent it stands for; a sink that reads many blocks takes
  // them packed instead.
  virtual void OnBlocks(const BlockBatch& batch) {
    TraceEvent event{EventHeader{}, ExecBlock{}};
    for (size_t i = 0; i < batch.blocks.size(); ++i) {
      batch.Unpack(i, event);
      OnEvent(event);
    }
  }
  virtual void OnEnd() {}
};

}  // namespace ptprof
