#include "src/pipeline/stream_merge.h"

#include <catch2/catch.hpp>

#include <new>
#include <string>
#include <system_error>
#include <utility>

#include "tests/unit/child_process.h"

namespace ptprof {
namespace {

// Events named by their offset; time_ns as given (kUnknownTime: untimed).
TraceEvent At(uint64_t offset, uint64_t time_ns, uint64_t tsc = kUnknownTime) {
  TraceEvent event{EventHeader{}, Marker{}};
  event.header.offset = offset;
  event.header.time_ns = time_ns;
  event.header.tsc = tsc;
  return event;
}

class Collect : public EventSink {
 public:
  void OnEvent(const TraceEvent& event) override { offsets.push_back(event.header.offset); }
  std::vector<uint64_t> offsets;
};

StreamProducer Producing(std::vector<TraceEvent> events) {
  return [events = std::move(events)](EventSink& sink) {
    for (const TraceEvent& event : events) sink.OnEvent(event);
  };
}

TEST_CASE("MergeKey: time, else tsc, else the previous key; never backwards") {
  CHECK(MergeKey(At(0, 50), 10) == 50);
  CHECK(MergeKey(At(0, kUnknownTime, 70), 10) == 70);
  CHECK(MergeKey(At(0, kUnknownTime), 10) == 10);
  CHECK(MergeKey(At(0, 5), 10) == 10);
}

TEST_CASE("MergeStreams: by time across streams, ties in stream order, untimed with the event before") {
  Collect out;
  MergeStreams({Producing({At(1, kUnknownTime), At(2, 10), At(3, kUnknownTime), At(4, 30)}),
                Producing({At(11, 10), At(12, 20), At(13, 5), At(14, 40)})},
               out);
  // Stream 0: keys 0, 10, 10, 30; stream 1: 10, 20, 20 (5 < 20 keeps its place), 40.
  CHECK(out.offsets == std::vector<uint64_t>{1, 2, 3, 11, 12, 13, 4, 14});
}

TEST_CASE("MergeStreams: long streams through small queues keep every event in order") {
  std::vector<std::vector<TraceEvent>> streams(3);
  for (uint64_t i = 0; i < 20000; ++i) streams[i % 3].push_back(At(i, i));
  std::vector<StreamProducer> producers;
  for (auto& events : streams) producers.push_back(Producing(events));
  Collect out;
  MergeStreams(producers, out, 300);
  REQUIRE(out.offsets.size() == 20000);
  for (uint64_t i = 0; i < 20000; ++i) REQUIRE(out.offsets[i] == i);
}

TEST_CASE("MergeStreams: a stream with no thread to be had is an error, after the others end") {
  // One thread can start, the second cannot: the first stream's producer, blocked on its full
  // queue, is let go, and the error goes up once it has ended.
  const testing::ChildRun run = testing::RunWithoutThreads(
      [](int out) {
        std::vector<std::vector<TraceEvent>> streams(3);
        for (uint64_t i = 0; i < 20000; ++i) streams[i % 3].push_back(At(i, i));
        std::vector<StreamProducer> producers;
        for (auto& events : streams) producers.push_back(Producing(events));
        Collect merged;
        std::string said = "merged";
        try {
          MergeStreams(producers, merged, 300);
        } catch (const std::system_error&) {
          said = merged.offsets.empty() ? "refused" : "refused after merging some";
        }
        if (write(out, said.data(), said.size()) < 0) _exit(2);
      },
      1);
  CHECK(run.Exited(0));
  if (run.output == testing::kThreadStarted) {
    WARN("the limit did not keep a thread from starting here: not tested");
    return;
  }
  CHECK(run.output == "refused");
}

TEST_CASE("MergeStreams: what a producer throws is thrown once the other streams have ended") {
  std::vector<std::vector<TraceEvent>> streams(3);
  for (uint64_t i = 0; i < 20000; ++i) streams[i % 3].push_back(At(i, i));
  std::vector<StreamProducer> producers;
  for (auto& events : streams) producers.push_back(Producing(events));
  // The second stream fails after 100 of its events.
  producers[1] = [events = streams[1]](EventSink& sink) {
    for (size_t i = 0; i < 100; ++i) sink.OnEvent(events[i]);
    throw std::bad_alloc();
  };
  Collect merged;
  CHECK_THROWS_AS(MergeStreams(producers, merged, 300), std::bad_alloc);
  // The events before the failure were merged, and all of the other streams'.
  CHECK(merged.offsets.size() == 2 * 6667 - 1 + 100);
}

TEST_CASE("MergeStreams: one stream goes straight through, empty streams end") {
  Collect out;
  MergeStreams({Producing({At(7, 3), At(8, 1)})}, out);
  CHECK(out.offsets == std::vector<uint64_t>{7, 8});
  Collect merged;
  MergeStreams({Producing({}), Producing({At(9, 1)}), Producing({})}, merged);
  CHECK(merged.offsets == std::vector<uint64_t>{9});
}

}  // namespace
}  // namespace ptprof
