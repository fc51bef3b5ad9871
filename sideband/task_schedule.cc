#include "sideband/task_schedule.h"

#include <algorithm>

namespace ptprof {

void TaskSchedule::Run(uint32_t cpu, uint64_t time, const Task& task) {
  auto& slices = of_cpu_[cpu];
  if (!slices.empty() && slices.back().task == task) return;  // no change
  if (!slices.empty() && slices.back().from == time) {
    slices.back().task = task;  // the last word at one time wins
    return;
  }
  slices.push_back(Slice{time, task});
}

std::optional<Task> TaskSchedule::At(uint32_t cpu, uint64_t time, TimeSpan* span) const {
  auto it = of_cpu_.find(cpu);
  if (it == of_cpu_.end() || it->second.empty()) {
    if (span) *span = TimeSpan{};
    return std::nullopt;
  }
  const auto& slices = it->second;
  auto after = std::upper_bound(slices.begin(), slices.end(), time,
                                [](uint64_t t, const Slice& s) { return t < s.from; });
  // Before the first switch the first task runs, from time 0 on.
  const auto slice = after == slices.begin() ? after : after - 1;
  if (span)
    *span = TimeSpan{slice == slices.begin() ? 0 : slice->from,
                     slice + 1 == slices.end() ? UINT64_MAX : (slice + 1)->from};
  return slice->task;
}

std::optional<Task> TaskSchedule::First(uint32_t cpu) const {
  auto it = of_cpu_.find(cpu);
  if (it == of_cpu_.end() || it->second.empty()) return std::nullopt;
  return it->second.front().task;
}

int32_t TaskSchedule::PidOf(int32_t tid) const {
  auto it = pid_of_tid_.find(tid);
  return it == pid_of_tid_.end() ? -1 : it->second;
}

size_t TaskSchedule::Changes(uint32_t cpu) const {
  auto it = of_cpu_.find(cpu);
  return it == of_cpu_.end() ? 0 : it->second.size();
}

}  // namespace ptprof
