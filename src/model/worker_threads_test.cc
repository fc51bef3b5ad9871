#include "src/model/worker_threads.h"

#include <atomic>
#include <new>
#include <stdexcept>

#include <catch2/catch.hpp>

namespace ptprof {
namespace {

TEST_CASE("StartThreads starts each thread with its index and a copy of the work") {
  std::atomic<unsigned> sum{0};
  std::vector<std::thread> threads;
  {
    // The work goes out of scope before the threads end: each has its own copy.
    auto work = [&sum](unsigned i) { sum += i + 1; };
    const ThreadsStarted started = StartThreads(threads, 4, work);
    CHECK(started.count == 4);
    CHECK_FALSE(started.refused);
    CHECK(started.why.empty());
  }
  for (std::thread& thread : threads) thread.join();
  CHECK(sum == 1 + 2 + 3 + 4);
}

TEST_CASE("Caught gives what the function threw, or nothing") {
  CHECK_FALSE(Caught([] {}));
  const std::exception_ptr failed = Caught([] { throw std::bad_alloc(); });
  REQUIRE(failed);
  CHECK_THROWS_AS(std::rethrow_exception(failed), std::bad_alloc);
}

}  // namespace
}  // namespace ptprof
