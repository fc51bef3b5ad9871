#pragma once
// FanoutSink hands every event of one decode to several sinks in order (a writer and the summary
// statistics, say), so that a trace is decoded once whatever number of consumers it has.
#include <memory>
#include <vector>

#include "src/model/parted_sink.h"

namespace ptprof {

class FanoutSink : public EventSink {
 public:
  explicit FanoutSink(std::vector<EventSink*> sinks) : sinks_(std::move(sinks)) {}
  void OnEvent(const TraceEvent& event) override {
    for (EventSink* sink : sinks_) sink->OnEvent(event);
  }
  void OnBlocks(const BlockBatch& batch) override {
    for (EventSink* sink : sinks_) sink->OnBlocks(batch);
  }
  void OnEnd() override {
    for (EventSink* sink : sinks_) sink->OnEnd();
  }

 protected:
  std::vector<EventSink*> sinks_;
};

// A FanoutSink of sinks that all take their stream in parts: a part is a fanout of a part of
// each, and Fold hands each sink its own.
class PartedFanoutSink : public PartedSink {
 public:
  explicit PartedFanoutSink(std::vector<PartedSink*> sinks)
      : sinks_(std::move(sinks)), all_(std::vector<EventSink*>(sinks_.begin(), sinks_.end())) {}
  void OnEvent(const TraceEvent& event) override { all_.OnEvent(event); }
  void OnBlocks(const BlockBatch& batch) override { all_.OnBlocks(batch); }
  void OnEnd() override { all_.OnEnd(); }
  std::unique_ptr<EventSink> NewPart() const override { return MakePart(false); }
  std::unique_ptr<EventSink> NewFirstPart() const override { return MakePart(true); }
  std::string Refusal(const EventSink& part) const override {
    const auto& parts = static_cast<const Part&>(part);
    for (size_t i = 0; i < sinks_.size(); ++i)
      if (std::string why = sinks_[i]->Refusal(*parts.owned[i]); !why.empty()) return why;
    return {};
  }
  bool TakesParts() const override {
    for (const PartedSink* sink : sinks_)
      if (!sink->TakesParts()) return false;
    return true;
  }
  void Fold(std::unique_ptr<EventSink> part) override {
    auto& parts = static_cast<Part&>(*part);
    for (size_t i = 0; i < sinks_.size(); ++i) sinks_[i]->Fold(std::move(parts.owned[i]));
  }
  // The shortest any of them asks for.
  uint64_t PartBytes() const override {
    uint64_t bytes = 0;
    for (const PartedSink* sink : sinks_)
      if (const uint64_t b = sink->PartBytes(); b && (!bytes || b < bytes)) bytes = b;
    return bytes;
  }

 private:
  struct Part : FanoutSink {
    Part() : FanoutSink({}) {}
    std::vector<std::unique_ptr<EventSink>> owned;
    friend class PartedFanoutSink;
  };
  std::unique_ptr<EventSink> MakePart(bool first) const {
    auto part = std::make_unique<Part>();
    for (const PartedSink* sink : sinks_)
      part->owned.push_back(first ? sink->NewFirstPart() : sink->NewPart());
    for (const auto& owned : part->owned) part->sinks_.push_back(owned.get());
    return part;
  }
  std::vector<PartedSink*> sinks_;
  FanoutSink all_;  // the same sinks, for the events it takes directly
};

// A fanout of `sinks` that takes its stream in parts when every one of them can.
inline std::unique_ptr<EventSink> MakeFanoutSink(const std::vector<EventSink*>& sinks) {
  std::vector<PartedSink*> parted;
  for (EventSink* sink : sinks)
    if (auto* p = dynamic_cast<PartedSink*>(sink)) parted.push_back(p);
  if (parted.size() == sinks.size()) return std::make_unique<PartedFanoutSink>(std::move(parted));
  return std::make_unique<FanoutSink>(sinks);
}

}  // namespace ptprof
