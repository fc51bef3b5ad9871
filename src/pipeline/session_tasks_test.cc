#include "src/pipeline/session_tasks.h"

#include <catch2/catch.hpp>

using namespace ptprof;

namespace {

// Three tasks on CPU 0 (A from 1,000 ns, B from 2,000, A again from 3,000); B's process maps
// more code at 2,500, so B runs in two address spaces.
SessionTasks ThreeSlices(std::optional<perf::PerfClock> clock) {
  SessionTasks tasks;
  tasks.clock = clock;
  tasks.schedule.Run(0, 1000, {1, 1});
  tasks.schedule.Run(0, 2000, {2, 2});
  tasks.schedule.Run(0, 3000, {1, 1});
  tasks.spaces.Map(1, 0, {0x400000, 0x1000, 0});
  tasks.spaces.Map(2, 0, {0x400000, 0x1000, 0});
  tasks.spaces.Map(2, 2500, {0x500000, 0x1000, 0});
  return tasks;
}

// Every span TaskAt tells holds the same answer throughout and ends where the answer changes.
void CheckSpans(const SessionTasks& tasks, uint64_t last_tsc) {
  ImageSet images;
  auto timeline = tasks.ForStream(images, 0u, std::nullopt);
  // The answer at each TSC from a timeline that knows nothing yet, and how often it changed
  // up to there.
  std::vector<pt::RunningTask> answer;
  std::vector<size_t> changes;
  for (uint64_t tsc = 0; tsc <= last_tsc + 1; ++tsc) {
    answer.push_back(tasks.ForStream(images, 0u, std::nullopt)->TaskAt(tsc, nullptr));
    changes.push_back(tsc == 0 ? 0 : changes.back() + !(answer[tsc] == answer[tsc - 1]));
  }
  CHECK(changes.back() == 3);  // A (from time 0), B, B with more code, A
  for (uint64_t tsc = 0; tsc <= last_tsc; ++tsc) {
    INFO("tsc " << tsc);
    pt::TscSpan same;
    REQUIRE(timeline->TaskAt(tsc, &same) == answer[tsc]);
    REQUIRE(same.Holds(tsc));
    REQUIRE(changes[same.first] == changes[tsc]);  // the same answer throughout
    if (same.first > 0) REQUIRE(!(answer[same.first - 1] == answer[tsc]));  // and no further
    if (same.last <= last_tsc) {
      REQUIRE(changes[same.last] == changes[tsc]);
      REQUIRE(!(answer[same.last + 1] == answer[tsc]));
    } else {
      REQUIRE(changes.back() == changes[tsc]);
    }
  }
}

}  // namespace

TEST_CASE("SessionTasks: the trace times around a time with the same task and code") {
  SECTION("the TSC is the time") { CheckSpans(ThreeSlices(std::nullopt), 4000); }
  SECTION("about three TSC ticks to the nanosecond, from 500 ns") {
    CheckSpans(ThreeSlices(perf::PerfClock{10, 341, 500}), 12000);
  }
  SECTION("a TSC tick of seven nanoseconds") {
    CheckSpans(ThreeSlices(perf::PerfClock{4, 7 * 16, 0}), 600);
  }
}

TEST_CASE("SessionTasks: before the first timing packet, the first task known, at no time") {
  SessionTasks tasks = ThreeSlices(std::nullopt);
  ImageSet images;
  auto timeline = tasks.ForStream(images, 0u, std::nullopt);
  pt::TscSpan same = pt::TscSpan::At(7);
  CHECK(timeline->TaskAt(std::nullopt, &same).tid == 1);
  CHECK(same == pt::TscSpan::At(7));  // untouched: no time
  CHECK(timeline->TaskAt(2000, &same).tid == 2);
  CHECK(same == pt::TscSpan{2000, 2499});
  CHECK(timeline->TaskAt(std::nullopt, nullptr).tid == 1);  // not the cached answer at 2000
}
