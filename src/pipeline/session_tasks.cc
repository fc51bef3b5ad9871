#include "src/pipeline/session_tasks.h"

#include <variant>

namespace ptprof {

namespace {

// The decoder asks before every block; the answer changes only where the schedule or the
// running process's address space does, and the answer is kept over the trace times between.
class StreamTasks : public pt::TaskTimeline {
 public:
  StreamTasks(const SessionTasks& tasks, const ImageSet& images, std::optional<uint32_t> cpu,
              std::optional<int32_t> tid)
      : tasks_(tasks), images_(images), cpu_(cpu), tid_(tid) {}

  pt::RunningTask TaskAt(std::optional<uint64_t> tsc, pt::TscSpan* same) override {
    if (!cached_ || !(tsc ? cached_span_.Holds(*tsc) : cached_none_)) {
      const uint64_t time = tsc ? tasks_.TimeOf(*tsc) : 0;  // no time yet: the first task known
      Task task;
      TimeSpan span;
      if (tid_) {
        task = Task{tasks_.schedule.PidOf(*tid_), *tid_};
      } else if (cpu_) {
        task = tasks_.schedule.At(*cpu_, time, &span).value_or(Task{});
      }
      TimeSpan space_span;
      cached_ = pt::RunningTask{task.pid, task.tid,
                                tasks_.spaces.SpaceAt(task.pid, time, &space_span)};
      cached_none_ = !tsc;
      cached_span_ = tsc ? tasks_.TscSpanOf(*tsc, span.And(space_span)) : pt::TscSpan{};
    }
    if (same && tsc) *same = cached_span_;
    return *cached_;
  }

  std::unique_ptr<pt::TaskTimeline> ForThread() const override {
    return std::make_unique<StreamTasks>(tasks_, images_, cpu_, tid_);
  }

  std::vector<const ImageSection*> SpaceSections(size_t space) const override {
    std::vector<const ImageSection*> sections;
    for (const Mapping& mapping : tasks_.spaces.MappingsOf(space)) {
      if (mapping.image >= tasks_.image_sections.size()) continue;
      const auto [first, last] = tasks_.image_sections[mapping.image];
      for (size_t i = first; i < last && i < images_.sections().size(); ++i)
        sections.push_back(&images_.sections()[i]);
    }
    return sections;
  }

 private:
  const SessionTasks& tasks_;
  const ImageSet& images_;
  std::optional<uint32_t> cpu_;
  std::optional<int32_t> tid_;
  // The last answer, and where it holds: the trace times in cached_span_, and no time (before
  // the first timing packet) when cached_none_.
  std::optional<pt::RunningTask> cached_;
  pt::TscSpan cached_span_;
  bool cached_none_ = false;
};

int32_t Id(uint32_t id) { return static_cast<int32_t>(id); }

// The farthest trace time from `tsc` (up or down) whose perf time `in` holds, where `in` holds
// at `tsc`: doubling the step while it holds, then halving between the last time it held and
// the first it did not. TimeOf is monotone, so `in` holds on one interval around `tsc`.
template <typename In>
uint64_t Reach(uint64_t tsc, bool up, const In& in) {
  uint64_t good = tsc;
  uint64_t bad = 0;
  for (uint64_t step = 1;; step *= 2) {
    const uint64_t room = up ? UINT64_MAX - good : good;
    const uint64_t probe = room < step ? (up ? UINT64_MAX : 0) : (up ? good + step : good - step);
    if (!in(probe)) {
      bad = probe;
      break;
    }
    if (room < step) return probe;  // it holds to the end of the TSC's range
    good = probe;
  }
  while ((up ? bad - good : good - bad) > 1) {
    const uint64_t mid = up ? good + (bad - good) / 2 : good - (good - bad) / 2;
    (in(mid) ? good : bad) = mid;
  }
  return good;
}

}  // namespace

pt::TscSpan SessionTasks::TscSpanOf(uint64_t tsc, const TimeSpan& span) const {
  const uint64_t time = TimeOf(tsc);
  if (!span.Holds(time)) return pt::TscSpan::At(tsc);
  // A time on the wrong side of `tsc`'s (a product wrapping) does not hold either.
  return pt::TscSpan{Reach(tsc, false, [&](uint64_t x) {
                       const uint64_t t = TimeOf(x);
                       return t <= time && span.Holds(t);
                     }),
                     Reach(tsc, true, [&](uint64_t x) {
                       const uint64_t t = TimeOf(x);
                       return t >= time && span.Holds(t);
                     })};
}

std::unique_ptr<pt::TaskTimeline> SessionTasks::ForStream(const ImageSet& images,
                                                          std::optional<uint32_t> cpu,
                                                          std::optional<int32_t> tid) const {
  if (cpu && (per_cpu || !tid)) tid.reset();  // the CPU's schedule says who runs
  return std::make_unique<StreamTasks>(*this, images, cpu, tid);
}

void AddPerfSideband(const perf::PerfData& data, const ImageOfMmap& image_of, SessionTasks& tasks) {
  for (const perf::PerfRecord& record : data.sideband) {
    const perf::SampleId& id = record.sample_id;
    const uint64_t time = id.time.value_or(0);
    if (id.pid && id.tid && *id.pid != UINT32_MAX) tasks.schedule.Thread(Id(*id.tid), Id(*id.pid));
    if (const auto* mmap = std::get_if<perf::MmapRecord>(&record.body)) {
      if (!mmap->executable) continue;
      if (auto image = image_of(record, *mmap))
        tasks.spaces.Map(Id(mmap->pid), time, Mapping{mmap->addr, mmap->len, *image});
    } else if (const auto* start = std::get_if<perf::ItraceStartRecord>(&record.body)) {
      tasks.schedule.Thread(Id(start->tid), Id(start->pid));
      if (id.cpu) tasks.schedule.Run(*id.cpu, time, {Id(start->pid), Id(start->tid)});
    } else if (const auto* sw = std::get_if<perf::SwitchRecord>(&record.body)) {
      if (!id.cpu || !id.pid || !id.tid) continue;
      // The switch is complete when the next task is switched in: until then (between the
      // switch-out record and the switch-in record) the CPU still runs the old task's kernel
      // path. A switch-out only says who ran before when nothing is known about the CPU yet.
      const Task task{Id(*id.pid), Id(*id.tid)};
      if (!sw->out) {
        tasks.schedule.Run(*id.cpu, time, task);
      } else if (tasks.schedule.Changes(*id.cpu) == 0) {
        tasks.schedule.Run(*id.cpu, time, task);
      }
    } else if (const auto* comm = std::get_if<perf::CommRecord>(&record.body)) {
      tasks.schedule.Thread(Id(comm->tid), Id(comm->pid));
      if (comm->exec) tasks.spaces.Exec(Id(comm->pid), time);
    } else if (const auto* task = std::get_if<perf::TaskRecord>(&record.body)) {
      tasks.schedule.Thread(Id(task->tid), Id(task->pid));
      const uint64_t at = id.time ? time : task->time;
      if (task->fork) {
        tasks.spaces.Fork(Id(task->pid), Id(task->ppid), at);
      } else if (task->pid == task->tid) {
        tasks.spaces.Exit(Id(task->pid), at);  // the process ends with its main thread
      }
    }
  }
}

}  // namespace ptprof
