#include "src/model/unended_sink.h"

#include <catch2/catch.hpp>

using namespace ptprof;

namespace {

struct Counting : EventSink {
  int events = 0, ends = 0;
  void OnEvent(const TraceEvent&) override { ++events; }
  void OnEnd() override { ++ends; }
};

// Takes parts; refuses those made by NewPart (not the first), to see Refusal passed through.
struct PartedCounting : PartedSink {
  mutable int made = 0, first_made = 0;
  int folded = 0, events = 0, ends = 0;
  uint64_t PartBytes() const override { return 4096; }
  std::unique_ptr<EventSink> NewPart() const override {
    ++made;
    return std::make_unique<Counting>();
  }
  std::unique_ptr<EventSink> NewFirstPart() const override {
    ++first_made;
    auto part = std::make_unique<Counting>();
    part->events = -1;  // marks it as a first part
    return part;
  }
  std::string Refusal(const EventSink& part) const override {
    return static_cast<const Counting&>(part).events < 0 ? "" : "not a first part";
  }
  void Fold(std::unique_ptr<EventSink>) override { ++folded; }
  void OnEvent(const TraceEvent&) override { ++events; }
  void OnEnd() override { ++ends; }
};

}  // namespace

TEST_CASE("an unended sink passes events on but not the end") {
  Counting next;
  UnendedSink sink(next);
  sink.OnEvent(TraceEvent{});
  sink.OnBlocks(BlockBatch{});
  sink.OnEnd();
  CHECK(next.events == 1);
  CHECK(next.ends == 0);
  CHECK_FALSE(sink.TakesParts());  // next takes one stream
  CHECK(sink.PartBytes() == 0);
}

TEST_CASE("an unended sink takes parts when its consumer does, and they are the consumer's") {
  PartedCounting next;
  UnendedSink sink(next);
  REQUIRE(sink.TakesParts());
  CHECK(sink.PartBytes() == 4096);
  auto first = sink.NewFirstPart();
  auto other = sink.NewPart();
  CHECK(next.first_made == 1);
  CHECK(next.made == 1);
  CHECK(sink.CanFold(*first));
  CHECK(sink.Refusal(*other) == "not a first part");
  sink.Fold(std::move(first));
  CHECK(next.folded == 1);
  sink.OnEvent(TraceEvent{});
  sink.OnEnd();
  CHECK(next.events == 1);
  CHECK(next.ends == 0);
}
