#include "decoders/pt/segment_workers.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <new>
#include <string>
#include <sys/resource.h>
#include <system_error>
#include <thread>
#include <unistd.h>

#include "tests/unit/child_process.h"

using namespace ptprof;
using namespace ptprof::pt;

TEST_CASE("SegmentWorkers hands over the outcomes in order, a bounded number ahead",
          "[segment_workers]") {
  for (unsigned threads : {1u, 3u}) {
    INFO(threads << " threads");
    std::atomic<size_t> running{0}, most{0}, decoded{0};
    std::atomic<size_t> taken{0};
    std::atomic<size_t> most_ahead{0};
    const size_t count = 40;
    const size_t ahead = 2 * threads;
    SegmentWorkers workers(count, threads, ahead, [&](size_t index, SegmentOutcome& outcome) {
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
    size_t mine = 0;
    for (size_t index = 0; index < count; ++index) {
      auto outcome = workers.Take(index);
      if (!outcome) {
        ++mine;  // this thread decodes it: no worker ever does
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        continue;
      }
      ++taken;
      CHECK(outcome->decoded.range.begin == index);
    }
    CHECK(decoded == count - mine);
    CHECK(workers.claimed_by_workers() == count - mine);
    CHECK(most <= threads);
    CHECK(most_ahead <= ahead + threads);
  }
}

TEST_CASE("SegmentWorkers gives the stitching thread a share when the workers are slower",
          "[segment_workers]") {
  // Workers that take 4 ms a segment, a stitching thread that takes 1 ms to pass one on or 2 ms
  // to decode one: it must decode some itself rather than wait all along.
  const size_t count = 60;
  SegmentWorkers workers(count, 1, 2, [&](size_t index, SegmentOutcome& outcome) {
    std::this_thread::sleep_for(std::chrono::milliseconds(4));
    outcome.decoded.range.begin = index;
  });
  size_t mine = 0;
  for (size_t index = 0; index < count; ++index) {
    auto outcome = workers.Take(index);
    if (outcome) REQUIRE(outcome->decoded.range.begin == index);
    else ++mine;
    std::this_thread::sleep_for(std::chrono::milliseconds(outcome ? 1 : 2));
  }
  CHECK(mine >= count / 4);
  CHECK(mine + workers.claimed_by_workers() == count);
}

TEST_CASE("SegmentWorkers leaves the decoding to the workers when the stitching is slower",
          "[segment_workers]") {
  const size_t count = 30;
  SegmentWorkers workers(count, 1, 2, [&](size_t index, SegmentOutcome& outcome) {
    outcome.decoded.range.begin = index;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the workers get ahead
  size_t mine = 0;
  for (size_t index = 0; index < count; ++index) {
    auto outcome = workers.Take(index);
    if (!outcome) ++mine;
    std::this_thread::sleep_for(std::chrono::milliseconds(3));
  }
  CHECK(mine <= count / 3);  // (a busy machine may keep the worker from claiming in time)
}

TEST_CASE("SegmentWorkers stops with outcomes not taken", "[segment_workers]") {
  std::atomic<size_t> decoded{0};
  SegmentWorkers workers(6, 2, 4, [&](size_t, SegmentOutcome&) { ++decoded; });
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  auto first = workers.Take(0);
  workers.Stop();  // must not wait for the rest to be taken
  CHECK(decoded >= 1);
  CHECK(decoded <= 6);
}

TEST_CASE("SegmentWorkers leaves every segment to the stitching thread when no worker can be "
          "started", "[segment_workers]") {
  const ptprof::testing::ChildRun run = ptprof::testing::RunWithoutThreads([](int out) {
    SegmentWorkers workers(10, 3, 4, [](size_t, SegmentOutcome&) {});
    size_t mine = 0;
    for (size_t index = 0; index < 10; ++index) mine += workers.Take(index) ? 0 : 1;
    workers.Stop();
    const std::string said = mine == 10 && workers.claimed_by_workers() == 0 ? "stitched" : "wrong";
    if (write(out, said.data(), said.size()) < 0) _exit(2);
  });
  CHECK(run.Exited(0));
  if (run.output == ptprof::testing::kThreadStarted) {
    WARN("the limit did not keep a thread from starting here: not tested");
    return;
  }
  CHECK(run.output == "stitched");
}

TEST_CASE("SegmentWorkers throws what a worker's decode threw, on the stitching thread",
          "[segment_workers]") {
  for (unsigned threads : {1u, 3u}) {
    INFO(threads << " threads");
    std::atomic<size_t> failed{0};
    SegmentWorkers workers(40, threads, 4, [&](size_t, SegmentOutcome&) {
      ++failed;
      throw std::bad_alloc();
    });
    bool thrown = false;
    size_t taken = 0;
    try {
      for (; taken < 40; ++taken) {
        // The stitching thread's own segments take a while, so that the workers claim theirs.
        if (!workers.Take(taken)) std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    } catch (const std::bad_alloc&) {
      thrown = true;
    }
    workers.Stop();
    CHECK(thrown);
    CHECK(taken < 40);
    CHECK(failed >= 1);
    CHECK(failed <= threads);  // a worker claims no more once one has failed
  }
}
