#include "decoders/pt/part_queue.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <new>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>
#include <sys/resource.h>
#include <unistd.h>

#include "tests/unit/child_process.h"

using namespace ptprof::pt;

TEST_CASE("PartQueue decodes every segment once, within reach of the one waited for",
          "[part_queue]") {
  for (unsigned workers : {0u, 1u, 3u}) {
    INFO(workers << " workers");
    constexpr size_t kCount = 40, kAhead = 3;
    std::mutex mutex;
    std::vector<int> decoded(kCount, 0);
    std::atomic<size_t> waited{0};
    std::atomic<bool> out_of_reach{false};
    const std::thread::id caller = std::this_thread::get_id();
    std::atomic<size_t> by_caller{0};
    PartQueue queue(kCount, workers, kAhead, [&](size_t segment) {
      if (segment >= waited + kAhead) out_of_reach = true;
      if (std::this_thread::get_id() == caller) ++by_caller;
      std::this_thread::sleep_for(std::chrono::microseconds(100 * (segment % 3)));
      std::lock_guard<std::mutex> lock(mutex);
      decoded[segment] += 1;
    });
    for (size_t segment = 0; segment < kCount; ++segment) {
      waited = segment;
      queue.WaitFor(segment);
      std::lock_guard<std::mutex> lock(mutex);
      REQUIRE(decoded[segment] == 1);
    }
    queue.Stop();
    for (int count : decoded) CHECK(count == 1);
    CHECK_FALSE(out_of_reach);
    CHECK(by_caller + queue.decoded_by_workers() == kCount);
    if (workers == 0) CHECK(by_caller == kCount);
  }
}

TEST_CASE("PartQueue stops with segments left undecoded", "[part_queue]") {
  std::atomic<size_t> decoded{0};
  {
    PartQueue queue(100, 2, 2, [&](size_t) { ++decoded; });
    queue.WaitFor(0);
    queue.Stop();
  }
  CHECK(decoded < 100);
}

TEST_CASE("PartQueue decodes everything itself when no worker thread can be started",
          "[part_queue]") {
  const ptprof::testing::ChildRun run = ptprof::testing::RunWithoutThreads([](int out) {
    std::vector<int> decoded(10, 0);
    PartQueue queue(decoded.size(), 3, 2, [&](size_t segment) { decoded[segment] += 1; });
    for (size_t segment = 0; segment < decoded.size(); ++segment) queue.WaitFor(segment);
    queue.Stop();
    const std::string said =
        queue.decoded_by_workers() == 0 && std::count(decoded.begin(), decoded.end(), 1) == 10
            ? "decoded"
            : "wrong";
    if (write(out, said.data(), said.size()) < 0) _exit(2);
  });
  CHECK(run.Exited(0));
  if (run.output == ptprof::testing::kThreadStarted) {
    WARN("the limit did not keep a thread from starting here: not tested");
    return;
  }
  CHECK(run.output == "decoded");
}

TEST_CASE("PartQueue throws what a decode threw, on the thread that waits", "[part_queue]") {
  for (unsigned workers : {0u, 1u, 3u}) {
    INFO(workers << " workers");
    std::atomic<size_t> decoded{0};
    PartQueue queue(20, workers, 4, [&](size_t segment) {
      if (segment == 5) throw std::bad_alloc();
      ++decoded;
    });
    bool thrown = false;
    size_t reached = 0;
    try {
      for (; reached < 20; ++reached) queue.WaitFor(reached);
    } catch (const std::bad_alloc&) {
      thrown = true;
    }
    queue.Stop();
    CHECK(thrown);
    CHECK(reached <= 5);
    CHECK(decoded < 20);  // nothing claimed once it failed past the window
  }
}
