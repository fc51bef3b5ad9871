#include "src/pipeline/fanout_sink.h"

#include <catch2/catch.hpp>

using namespace ptprof;

namespace {

// Records what it was given, directly or folded: block first IPs, and "|" at each fold.
class Log : public PartedSink {
 public:
  explicit Log(uint64_t part_bytes = 0) : part_bytes_(part_bytes) {}
  void OnEvent(const TraceEvent& event) override {
    if (const auto* block = std::get_if<ExecBlock>(&event.body)) text += std::to_string(block->first_ip) + " ";
  }
  void OnEnd() override { ++ends; }
  std::unique_ptr<EventSink> NewPart() const override { return std::make_unique<Log>(); }
  void Fold(std::unique_ptr<EventSink> part) override {
    auto& log = static_cast<Log&>(*part);
    text += "|" + log.text;
    ends_of_parts += log.ends;
  }
  uint64_t PartBytes() const override { return part_bytes_; }
  std::string text;
  int ends = 0, ends_of_parts = 0;

 private:
  uint64_t part_bytes_;
};

// Not parted.
class Plain : public EventSink {
 public:
  void OnEvent(const TraceEvent&) override {}
};

TraceEvent Block(uint64_t ip) { return TraceEvent{EventHeader{}, ExecBlock{ip, ip, 1}}; }

}  // namespace

TEST_CASE("a fanout of sinks that take their stream in parts takes it in parts") {
  Log a(4096), b(0), c(1024);
  std::unique_ptr<EventSink> fanout = MakeFanoutSink({&a, &b, &c});
  auto* parted = dynamic_cast<PartedSink*>(fanout.get());
  REQUIRE(parted);
  CHECK(parted->PartBytes() == 1024);
  parted->OnEvent(Block(1));
  std::unique_ptr<EventSink> part = parted->NewPart();
  part->OnEvent(Block(2));
  part->OnEvent(Block(3));
  part->OnEnd();
  parted->Fold(std::move(part));
  parted->OnEvent(Block(4));
  parted->OnEnd();
  for (const Log* log : {&a, &b, &c}) {
    CHECK(log->text == "1 |2 3 4 ");
    CHECK(log->ends == 1);
    CHECK(log->ends_of_parts == 1);
  }
}

TEST_CASE("a fanout with a sink that needs one stream takes one stream") {
  Log a;
  Plain b;
  std::unique_ptr<EventSink> fanout = MakeFanoutSink({&a, &b});
  CHECK_FALSE(dynamic_cast<PartedSink*>(fanout.get()));
  fanout->OnEvent(Block(7));
  CHECK(a.text == "7 ");
}
