#include "src/model/part_pipe.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "src/model/collecting_sink.h"
#include "src/model/event_equality.h"

using namespace ptprof;

namespace {

// Blocks, and every 100th event a marker (kept whole by EventChunks), at offsets 0, 1, 2...
std::vector<TraceEvent> Stream(size_t count) {
  std::vector<TraceEvent> events;
  for (size_t i = 0; i < count; ++i) {
    TraceEvent event{EventHeader{}, ExecBlock{}};
    if (i % 100 == 99) {
      Marker marker;
      marker.kind = Marker::Kind::kTimestamp;
      marker.value = i;
      event.body = marker;
    } else {
      ExecBlock& block = std::get<ExecBlock>(event.body);
      block.first_ip = 0x400000 + 16 * i;
      block.last_ip = block.first_ip + 4;
      block.insns = 2;
    }
    event.header.offset = i;
    events.push_back(event);
  }
  return events;
}

// A consumer that keeps its stream: events given directly, and folded parts' events after what
// it had. It notes the threads its parts were fed on, and refuses the part numbered `refuse`
// (counting Refusal's calls from 0; none by default).
class KeepingConsumer : public PartedSink {
 public:
  struct Part : testing::CollectingSink {
    std::thread::id fed_on;
    std::chrono::milliseconds work{0};  // at its end
    void OnEvent(const TraceEvent& event) override {
      fed_on = std::this_thread::get_id();
      CollectingSink::OnEvent(event);
    }
    void OnEnd() override {
      std::this_thread::sleep_for(work);
      CollectingSink::OnEnd();
    }
  };
  std::vector<TraceEvent> events;
  size_t direct = 0, folded = 0;
  size_t refuse = SIZE_MAX;
  mutable size_t asked = 0;
  bool parts_fed_elsewhere = true;
  bool takes_parts = true;
  mutable std::atomic<bool> throw_in_part{false};
  std::chrono::milliseconds part_work{0};

  void OnEvent(const TraceEvent& event) override {
    events.push_back(event);
    ++direct;
  }
  std::unique_ptr<EventSink> NewPart() const override {
    if (throw_in_part) throw std::runtime_error("no memory for a part");
    auto part = std::make_unique<Part>();
    part->work = part_work;
    return part;
  }
  std::string Refusal(const EventSink& part) const override {
    CHECK(static_cast<const Part&>(part).ended);
    return asked++ == refuse ? "refused" : "";
  }
  bool TakesParts() const override { return takes_parts; }
  void Fold(std::unique_ptr<EventSink> part_sink) override {
    auto& part = static_cast<Part&>(*part_sink);
    if (part.fed_on == std::this_thread::get_id()) parts_fed_elsewhere = false;
    events.insert(events.end(), part.events.begin(), part.events.end());
    ++folded;
  }
};

bool SameStream(const std::vector<TraceEvent>& a, const std::vector<TraceEvent>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!SameEvent(a[i], b[i])) return false;
  return true;
}

}  // namespace

TEST_CASE("PartPipe hands the stream to the consumer in parts fed on its thread, in order",
          "[part_pipe]") {
  const std::vector<TraceEvent> stream = Stream(10'000);
  KeepingConsumer consumer;
  consumer.part_work = std::chrono::milliseconds(2);  // more than the pipe's handing over
  PartPipe pipe(consumer, 700, 2);
  REQUIRE(pipe.Start());
  for (const TraceEvent& event : stream) pipe.OnEvent(event);
  pipe.Drain();
  CHECK(SameStream(consumer.events, stream));
  CHECK(consumer.direct == 0);
  CHECK(consumer.folded == (10'000 + 699) / 700);
  CHECK(pipe.parts_folded() == consumer.folded);
  CHECK(consumer.parts_fed_elsewhere);
  CHECK_FALSE(pipe.found_light());
  // After Drain the consumer may take events directly; the pipe goes on in parts.
  for (const TraceEvent& event : Stream(3)) consumer.OnEvent(event);
  for (const TraceEvent& event : stream) pipe.OnEvent(event);
  pipe.Drain();
  CHECK(consumer.events.size() == 2 * stream.size() + 3);
}

TEST_CASE("PartPipe: a refused part and everything after it go to the consumer directly",
          "[part_pipe]") {
  const std::vector<TraceEvent> stream = Stream(5'000);
  KeepingConsumer consumer;
  consumer.refuse = 3;
  consumer.part_work = std::chrono::milliseconds(2);
  PartPipe pipe(consumer, 400, 3);
  REQUIRE(pipe.Start());
  for (const TraceEvent& event : stream) pipe.OnEvent(event);
  pipe.Drain();
  CHECK(SameStream(consumer.events, stream));
  CHECK(pipe.parts_folded() == 3);
  CHECK(pipe.parts_refused() == 1);
  CHECK(consumer.direct == stream.size() - 3 * 400);
}

TEST_CASE("PartPipe passes every event on directly without parts", "[part_pipe]") {
  const std::vector<TraceEvent> stream = Stream(1'000);
  KeepingConsumer consumer;
  consumer.takes_parts = false;
  PartPipe pipe(consumer, 100);
  CHECK_FALSE(pipe.Start());
  for (const TraceEvent& event : stream) pipe.OnEvent(event);
  pipe.Drain();
  CHECK(SameStream(consumer.events, stream));
  CHECK(consumer.direct == stream.size());
  CHECK(pipe.parts_folded() == 0);
}

TEST_CASE("PartPipe throws on the decoding thread what a part's feeding threw", "[part_pipe]") {
  const std::vector<TraceEvent> stream = Stream(1'000);
  KeepingConsumer consumer;
  consumer.throw_in_part = true;
  PartPipe pipe(consumer, 100, 2);
  REQUIRE(pipe.Start());
  CHECK_THROWS_WITH(
      [&] {
        for (const TraceEvent& event : stream) pipe.OnEvent(event);
        pipe.Drain();
      }(),
      "no memory for a part");
}

TEST_CASE("PartPipe drops the parts not folded when the decode stops early", "[part_pipe]") {
  KeepingConsumer consumer;
  consumer.part_work = std::chrono::milliseconds(1);
  {
    PartPipe pipe(consumer, 50, 8);
    REQUIRE(pipe.Start());
    for (const TraceEvent& event : Stream(1'000)) pipe.OnEvent(event);
  }  // no Drain: the thread is stopped, nothing folded after
  CHECK(consumer.events.size() <= 1'000);
  CHECK(consumer.direct == 0);
}

TEST_CASE("PartPipe: a consumer whose parts take little of the decode's time gets the rest directly",
          "[part_pipe]") {
  const std::vector<TraceEvent> stream = Stream(2'000);
  KeepingConsumer consumer;
  PartPipe pipe(consumer, 100, 2);
  REQUIRE(pipe.Start());
  for (size_t i = 0; i < stream.size(); ++i) {
    if (i % 100 == 50) std::this_thread::sleep_for(std::chrono::milliseconds(5));  // decoding
    pipe.OnEvent(stream[i]);
  }
  pipe.Drain();
  CHECK(SameStream(consumer.events, stream));
  CHECK(pipe.found_light());
  CHECK(pipe.parts_folded() >= PartPipe::kProbeParts);
  CHECK(consumer.direct > 0);
  CHECK(consumer.direct + 100 * pipe.parts_folded() == stream.size());
}
