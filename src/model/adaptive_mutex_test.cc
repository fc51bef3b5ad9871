#include "src/model/adaptive_mutex.h"

#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

using ptprof::AdaptiveMutex;

TEST_CASE("AdaptiveMutex keeps threads that take it often out of each other's way",
          "[adaptive_mutex]") {
  AdaptiveMutex mutex;
  // A count updated with a read and a write apart (not atomic), and a pair of values that must
  // always be seen equal: any two threads inside at once lose increments or see them unequal.
  uint64_t count = 0, first = 0, second = 0;
  bool torn = false;
  constexpr int kThreads = 4, kRounds = 200000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < kRounds; ++i) {
        std::lock_guard lock(mutex);
        if (first != second) torn = true;
        const uint64_t seen = count;
        ++first;
        count = seen + 1;
        ++second;
      }
    });
  for (std::thread& thread : threads) thread.join();
  CHECK_FALSE(torn);
  CHECK(count == uint64_t{kThreads} * kRounds);
  CHECK(first == count);
}

TEST_CASE("AdaptiveMutex::try_lock fails while it is held and succeeds once it is free",
          "[adaptive_mutex]") {
  AdaptiveMutex mutex;
  mutex.lock();
  bool taken = true;
  std::thread([&] { taken = mutex.try_lock(); }).join();
  CHECK_FALSE(taken);
  mutex.unlock();
  std::thread([&] {
    taken = mutex.try_lock();
    if (taken) mutex.unlock();
  }).join();
  CHECK(taken);
}
