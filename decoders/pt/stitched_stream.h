#pragma once
// StitchedStream is the one stream a parallel decode builds out of its segments: it passes events
// on to the real sink in order and counts them the way FlowSummary does. For a sequential decode
// of the rest of a trace from inside it (Restart), the first `skip` events are dropped.
#include <cstddef>
#include <cstdint>
#include <variant>

#include "decoders/pt/flow_session.h"
#include "src/model/event_chunks.h"

namespace ptprof::pt {

class StitchedStream : public EventSink {
 public:
  explicit StitchedStream(EventSink& next) : next_(next) {}
  void Restart(size_t skip) { skip_ = skip; }
  void OnEvent(const TraceEvent& event) override {
    if (skip_) {
      --skip_;
      return;
    }
    Pass(event);
  }
  // An event already at its offset in the whole trace.
  void Pass(const TraceEvent& event) {
    if (const auto* block = std::get_if<ExecBlock>(&event.body)) {
      blocks += 1;
      insns += block->insns;
    } else if (std::holds_alternative<Instruction>(event.body)) {
      insns += 1;
    } else if (std::holds_alternative<TraceGap>(event.body)) {
      gaps += 1;
    }
    next_.OnEvent(event);
  }
  void OnBlocks(const BlockBatch& batch) override {
    if (skip_ >= batch.blocks.size()) {
      skip_ -= batch.blocks.size();
      return;
    }
    BlockBatch rest = batch;
    rest.blocks = batch.blocks.subspan(skip_);
    skip_ = 0;
    PassBlocks(rest);
  }
  // Blocks already at their offsets in the whole trace.
  void PassBlocks(const BlockBatch& batch) {
    blocks += batch.blocks.size();
    for (const PackedEvent& block : batch.blocks) insns += block.insns;
    next_.OnBlocks(batch);
  }
  // Events [from, to) of a segment's events, passed on (in batches where they are blocks).
  void PassRange(const EventChunks& events, size_t from, size_t to) {
    Passer passer{*this};
    events.PassOn(from, to, passer);
  }
  uint64_t blocks = 0, insns = 0, gaps = 0;

 private:
  struct Passer : EventSink {
    explicit Passer(StitchedStream& stream) : stream(stream) {}
    void OnEvent(const TraceEvent& event) override { stream.Pass(event); }
    void OnBlocks(const BlockBatch& batch) override { stream.PassBlocks(batch); }
    StitchedStream& stream;
  };
  EventSink& next_;
  size_t skip_ = 0;
};

}  // namespace ptprof::pt
