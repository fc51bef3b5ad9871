#include "sideband/task_schedule.h"

#include <catch2/catch.hpp>

namespace ptprof {
namespace {

TEST_CASE("TaskSchedule: the task on a CPU at a time") {
  TaskSchedule schedule;
  schedule.Run(0, 100, {10, 11});
  schedule.Run(0, 200, {0, 0});
  schedule.Run(0, 200, {20, 21});  // the last word at one time wins
  schedule.Run(0, 300, {20, 21});  // no change
  schedule.Run(3, 150, {30, 31});
  CHECK(schedule.At(0, 50) == Task{10, 11});  // before the first switch: the first task
  CHECK(schedule.At(0, 100) == Task{10, 11});
  CHECK(schedule.At(0, 199) == Task{10, 11});
  CHECK(schedule.At(0, 250) == Task{20, 21});
  CHECK(schedule.At(3, 1000) == Task{30, 31});
  CHECK_FALSE(schedule.At(1, 100));
  CHECK(schedule.First(0) == Task{10, 11});
  CHECK(schedule.Changes(0) == 2);
  schedule.Thread(21, 20);
  CHECK(schedule.PidOf(21) == 20);
  CHECK(schedule.PidOf(22) == -1);
}

}  // namespace
}  // namespace ptprof
