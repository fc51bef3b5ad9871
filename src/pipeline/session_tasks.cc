#include "src/pipeline/session_tasks.h"

#include <variant>

namespace ptprof {

namespace {

// The decoder asks before every block; the answer changes only when the trace time does.
class StreamTasks : public pt::TaskTimeline {
 public:
  StreamTasks(const SessionTasks& tasks, const ImageSet& images, std::optional<uint32_t> cpu,
              std::optional<int32_t> tid)
      : tasks_(tasks), images_(images), cpu_(cpu), tid_(tid) {}

  pt::RunningTask TaskAt(std::optional<uint64_t> tsc) override {
    if (cached_ && cached_tsc_ == tsc) return *cached_;
    const uint64_t time = tsc ? tasks_.TimeOf(*tsc) : 0;  // no time yet: the first known task
    Task task;
    if (tid_) {
      task = Task{tasks_.schedule.PidOf(*tid_), *tid_};
    } else if (cpu_) {
      task = tasks_.schedule.At(*cpu_, time).value_or(Task{});
    }
    pt::RunningTask running{task.pid, task.tid, tasks_.spaces.SpaceAt(task.pid, time)};
    cached_ = running;
    cached_tsc_ = tsc;
    return running;
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
  std::optional<pt::RunningTask> cached_;
  std::optional<uint64_t> cached_tsc_;
};

int32_t Id(uint32_t id) { return static_cast<int32_t>(id); }

}  // namespace

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
