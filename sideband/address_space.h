#pragma once
// AddressSpaces answers "which images are mapped in this process at this time?": it follows a
// system's processes through time as sideband tells it (mmaps, exec, fork, exit, in time order)
// and names each distinct state of a process's address space by a stable index, the "space", so
// that a decoder can build the code of a space once and switch to it whenever that process runs.
// The kernel half is shared: kernel mappings (pid kKernel) are part of every space.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "sideband/time_span.h"

namespace ptprof {

// Part of an image mapped at an address. `image` is the caller's id for what is mapped.
struct Mapping {
  uint64_t address = 0;
  uint64_t size = 0;
  size_t image = 0;
  bool operator==(const Mapping&) const = default;
};

class AddressSpaces {
 public:
  static constexpr int32_t kKernel = -1;
  static constexpr size_t kKernelOnly = 0;  // the space of a process nothing is known about

  // Sideband, in time order. Map with pid kKernel maps kernel code into every space.
  void Map(int32_t pid, uint64_t time, const Mapping& mapping);
  // The process replaced its program: its user mappings end.
  void Exec(int32_t pid, uint64_t time);
  // A new process (not a thread) starts with a copy of its parent's mappings.
  void Fork(int32_t child, int32_t parent, uint64_t time);
  // The process ended. Its last mappings stay its space (as perf keeps a dead thread's maps):
  // trace times and sideband times are not exact enough to cut code off at the exit record,
  // and a pid used again comes back through Fork, which starts a new state.
  void Exit(int32_t pid, uint64_t time);

  // The space of `pid` at `time` (perf-clock ns): its latest state at or before `time`; before
  // the first thing known about it, its first state; kKernelOnly for a pid never seen. `span`,
  // when given, is set to the times around `time` with the same answer.
  size_t SpaceAt(int32_t pid, uint64_t time, TimeSpan* span = nullptr) const;

  // The user mappings of a space in mapping order (a later one hides what it overlaps), after
  // the kernel's.
  std::vector<Mapping> MappingsOf(size_t space) const;

  size_t spaces() const { return spaces_.size() + 1; }

 private:
  struct Space {
    int32_t pid = 0;
    uint64_t from = 0;  // the time this state starts
    std::vector<Mapping> user;
  };
  // A new state of `pid` from `time` on, starting as `user`; returns it.
  Space& NewState(int32_t pid, uint64_t time, std::vector<Mapping> user);
  const Space* Latest(int32_t pid) const;

  std::vector<Space> spaces_;                     // space i + 1
  std::map<int32_t, std::vector<size_t>> of_pid_;  // indices into spaces_, in time order
  std::vector<Mapping> kernel_;
};

}  // namespace ptprof
