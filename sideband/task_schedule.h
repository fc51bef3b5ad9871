#pragma once
// TaskSchedule answers "which task ran on this CPU at this time, and which process is this
// thread part of?" from sideband: context switches, trace starts and task creation, in time order.
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "sideband/time_span.h"

namespace ptprof {

struct Task {
  int32_t pid = -1;
  int32_t tid = -1;
  bool operator==(const Task&) const = default;
};

class TaskSchedule {
 public:
  // `task` runs on `cpu` from `time` (perf-clock ns) on. Calls come in time order.
  void Run(uint32_t cpu, uint64_t time, const Task& task);
  // Thread `tid` belongs to process `pid` (from COMM/FORK/EXIT and sample ids).
  void Thread(int32_t tid, int32_t pid) { pid_of_tid_[tid] = pid; }

  // The task on `cpu` at `time`: the last one that started at or before it; before the first
  // switch, the first task known on the CPU; nullopt when nothing is known about the CPU.
  // `span`, when given, is set to the times around `time` with the same answer.
  std::optional<Task> At(uint32_t cpu, uint64_t time, TimeSpan* span = nullptr) const;
  // The first task known on `cpu`.
  std::optional<Task> First(uint32_t cpu) const;
  // The process of thread `tid`; -1 when unknown.
  int32_t PidOf(int32_t tid) const;

  // How many task changes were recorded on `cpu`.
  size_t Changes(uint32_t cpu) const;

 private:
  struct Slice {
    uint64_t from = 0;
    Task task;
  };
  std::map<uint32_t, std::vector<Slice>> of_cpu_;
  std::map<int32_t, int32_t> pid_of_tid_;
};

}  // namespace ptprof
