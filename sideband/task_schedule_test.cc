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

TEST_CASE("TaskSchedule: the times around a time with the same task") {
  TaskSchedule schedule;
  schedule.Run(0, 100, {10, 11});
  schedule.Run(0, 200, {20, 21});
  schedule.Run(0, 300, {20, 21});  // no change: the slice goes on
  schedule.Run(0, 400, {10, 11});
  TimeSpan span;
  CHECK(schedule.At(0, 50, &span) == Task{10, 11});
  CHECK(span == TimeSpan{0, 200});  // the first task from time 0 on
  CHECK(schedule.At(0, 200, &span) == Task{20, 21});
  CHECK(span == TimeSpan{200, 400});
  CHECK(schedule.At(0, 399, &span) == Task{20, 21});
  CHECK(span == TimeSpan{200, 400});
  CHECK(schedule.At(0, 400, &span) == Task{10, 11});
  CHECK(span == TimeSpan{400, UINT64_MAX});
  CHECK_FALSE(schedule.At(1, 100, &span));
  CHECK(span == TimeSpan{});  // nothing known about the CPU at any time
  CHECK(span.Holds(0));
  CHECK(TimeSpan{10, 20}.And(TimeSpan{15, 30}) == TimeSpan{15, 20});
  CHECK_FALSE(TimeSpan{10, 20}.Holds(20));
}

}  // namespace
}  // namespace ptprof
