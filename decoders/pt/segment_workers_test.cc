#include "decoders/pt/segment_workers.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>

using namespace ptprof;
using namespace ptprof::pt;

TEST_CASE("SegmentWorkers hands over the outcomes in order, a bounded number ahead",
          "[segment_workers]") {
  for (unsigned threads : {1u, 3u}) {
    INFO(threads << " threads");
    std::atomic<size_t> running{0}, most{0}, decoded{0};
    std::atomic<size_t> taken{0};
    std::atomic<size_t> most_ahead{0};
    std::vector<size_t> segments;
    for (size_t i = 1; i < 40; i += 2) segments.push_back(i);
    const size_t ahead = 2 * threads;
    SegmentWorkers workers(segments, threads, ahead, [&](size_t index, SegmentOutcome& outcome) {
      const size_t now = ++running;
      for (size_t seen = most; now > seen && !most.compare_exchange_weak(seen, now);) {
      }
      const size_t started = ++decoded;
      for (size_t seen = most_ahead, out = started - std::min<size_t>(taken, started);
           out > seen && !most_ahead.compare_exchange_weak(seen, out);) {
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      outcome.decoded.range.begin = index;
      --running;
    });
    for (size_t index : segments) {
      ++taken;  // before: a worker may start the next one while Take returns
      auto outcome = workers.Take(index);
      REQUIRE(outcome);
      CHECK(outcome->decoded.range.begin == index);
    }
    CHECK(decoded == segments.size());
    CHECK(most <= threads);
    CHECK(most_ahead <= ahead);
  }
}

TEST_CASE("SegmentWorkers stops with outcomes not taken", "[segment_workers]") {
  std::atomic<size_t> decoded{0};
  SegmentWorkers workers({1, 3, 5, 7, 9, 11}, 2, 4, [&](size_t, SegmentOutcome&) { ++decoded; });
  auto first = workers.Take(1);
  workers.Stop();  // must not wait for the rest to be taken
  CHECK(decoded >= 1);
  CHECK(decoded <= 5);
}
