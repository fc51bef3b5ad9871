#pragma once
// SessionTasks answers "who ran on each trace stream when, and with which code?" for a session
// whose sideband knows it (a perf.data): the task schedule (context switches, trace starts), the
// processes' address spaces over time (mmaps, exec, fork, exit; the kernel half shared), the
// session images each mapping stands for, and the TSC -> perf time conversion. ForStream gives
// the flow decoder what it asks before each block: the running task and its address space.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "decoders/pt/flow_session.h"
#include "sideband/address_space.h"
#include "sideband/image_set.h"
#include "sideband/perf/perf_clock.h"
#include "sideband/perf/perf_data.h"
#include "sideband/task_schedule.h"
#include "sideband/time_span.h"

namespace ptprof {

struct SessionTasks {
  TaskSchedule schedule;
  AddressSpaces spaces;
  // Mapping::image -> [first, last) indices into the session's ImageSet sections.
  std::vector<std::pair<size_t, size_t>> image_sections;
  std::optional<perf::PerfClock> clock;  // TSC -> perf time; absent: the TSC is the time
  // The AUX buffers were per CPU (intel_pt's per_cpu_mmaps): a stream's task comes from its
  // CPU's schedule even when its buffers name a thread; else from the thread they name.
  bool per_cpu = false;

  // Perf time of a trace TSC.
  uint64_t TimeOf(uint64_t tsc) const {
    return clock && clock->usable() ? clock->TscToPerfTime(tsc) : tsc;
  }

  // The trace times around `tsc` whose perf times are in `span` (which holds TimeOf(tsc)).
  pt::TscSpan TscSpanOf(uint64_t tsc, const TimeSpan& span) const;

  // What the decoder of a stream recorded on `cpu` or following thread `tid` asks (see per_cpu). `images`
  // must outlive the result.
  std::unique_ptr<pt::TaskTimeline> ForStream(const ImageSet& images, std::optional<uint32_t> cpu,
                                              std::optional<int32_t> tid) const;
};

// The image (an index into SessionTasks::image_sections) an mmap record maps, or nullopt when
// its code is not available (it then decodes as gaps).
using ImageOfMmap = std::function<std::optional<size_t>(const perf::PerfRecord&,
                                                        const perf::MmapRecord&)>;

// The schedule and address-space sideband of a perf.data, in its time order: ITRACE_START,
// SWITCH and SWITCH_CPU_WIDE (which task runs on each CPU), MMAP/MMAP2 (through `image_of`),
// COMM (exec), FORK, EXIT and the threads their ids name.
void AddPerfSideband(const perf::PerfData& data, const ImageOfMmap& image_of, SessionTasks& tasks);

}  // namespace ptprof
