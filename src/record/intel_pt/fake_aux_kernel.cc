#include "src/record/intel_pt/fake_aux_kernel.h"

#include <linux/perf_event.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>

namespace ptprof::record::hw {

namespace {

template <class T>
void Put(std::vector<uint8_t>& out, T value) {
  const auto* p = reinterpret_cast<const uint8_t*>(&value);
  out.insert(out.end(), p, p + sizeof value);
}

uint64_t MonotonicNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace

FakeAuxKernel::FakeAuxKernel(std::vector<uint8_t> trace, uint64_t bytes_per_ms,
                             std::vector<FakeMapping> mappings)
    : trace_(std::move(trace)),
      mappings_(std::move(mappings)),
      bytes_per_ms_(std::max<uint64_t>(1, bytes_per_ms)) {
  feeder_ = std::thread([this] { Feed(); });
}

FakeAuxKernel::~FakeAuxKernel() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  stop_cv_.notify_all();
  feeder_.join();
  for (auto& [fd, e] : events_) {
    if (e.aux) munmap(e.aux, e.aux_length);
    if (e.page) munmap(e.page, e.page_length);
  }
}

int FakeAuxKernel::Open(const void* attr, pid_t pid, int cpu) {
  std::lock_guard<std::mutex> lock(mutex_);
  const int fd = next_fd_++;
  Event e;
  const auto* a = static_cast<const perf_event_attr*>(attr);
  e.sample_type = a->sample_type;
  e.sample_id_all = a->sample_id_all;
  e.context_switch = a->context_switch;
  e.pid = pid;
  e.cpu = cpu;
  events_[fd] = e;
  return fd;
}

void FakeAuxKernel::WriteSwitch(Event& e, bool out) {
  if (!e.context_switch) return;
  const uint16_t misc = out ? PERF_RECORD_MISC_SWITCH_OUT : 0;
  if (e.cpu < 0) {
    WriteRecord(e, PERF_RECORD_SWITCH, misc, {});
    return;
  }
  std::vector<uint8_t> body;  // the task switched to (out) or from (in): the idle task
  Put(body, int32_t{0}), Put(body, int32_t{0});
  WriteRecord(e, PERF_RECORD_SWITCH_CPU_WIDE, misc, body);
}

void FakeAuxKernel::WriteRecord(Event& e, uint32_t type, uint16_t misc,
                                const std::vector<uint8_t>& body) {
  if (!e.page) return;
  std::vector<uint8_t> record(8);
  record.insert(record.end(), body.begin(), body.end());
  if (e.sample_id_all) {
    const int32_t pid = e.pid, cpu = e.cpu < 0 ? 0 : e.cpu;
    if (e.sample_type & PERF_SAMPLE_TID) Put(record, pid), Put(record, pid);
    if (e.sample_type & PERF_SAMPLE_TIME) Put(record, MonotonicNs());
    if (e.sample_type & PERF_SAMPLE_ID) Put(record, uint64_t{0});
    if (e.sample_type & PERF_SAMPLE_STREAM_ID) Put(record, uint64_t{0});
    if (e.sample_type & PERF_SAMPLE_CPU) Put(record, cpu), Put(record, int32_t{0});
    if (e.sample_type & PERF_SAMPLE_IDENTIFIER) Put(record, uint64_t{0});
  }
  perf_event_header header{type, misc, static_cast<uint16_t>(record.size())};
  std::memcpy(record.data(), &header, sizeof header);
  auto* meta = static_cast<perf_event_mmap_page*>(e.page);
  auto* data = static_cast<uint8_t*>(e.page) + meta->data_offset;
  const uint64_t head = meta->data_head;
  if (meta->data_size - (head - meta->data_tail) < record.size()) return;  // full: lost
  for (size_t i = 0; i < record.size(); ++i) data[(head + i) % meta->data_size] = record[i];
  __atomic_store_n(&meta->data_head, head + record.size(), __ATOMIC_RELEASE);
}

void FakeAuxKernel::ReportAux(Event& e, uint64_t flags) {
  const uint64_t head = e.page ? static_cast<perf_event_mmap_page*>(e.page)->aux_head : 0;
  if (head <= e.reported && flags == 0) return;
  std::vector<uint8_t> body;
  Put(body, e.reported), Put(body, head - e.reported), Put(body, flags);
  WriteRecord(e, PERF_RECORD_AUX, 0, body);
  e.reported = head;
}

void* FakeAuxKernel::Map(int fd, size_t length, int prot, off_t offset) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = events_.find(fd);
  if (it == events_.end() || length == 0) {
    errno = EINVAL;
    return MAP_FAILED;
  }
  void* memory = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) return MAP_FAILED;
  Event& e = it->second;
  if (offset == 0) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    auto* meta = static_cast<perf_event_mmap_page*>(memory);
    meta->data_offset = page;
    meta->data_size = length - page;
    meta->cap_user_time = 1;
    meta->cap_user_time_zero = 1;
    meta->time_shift = 0;
    meta->time_mult = 1;
    meta->time_zero = 0;
    e.page = memory;
    e.page_length = length;
  } else {
    e.aux = static_cast<uint8_t*>(memory);
    e.aux_length = length;
    e.overwrite = (prot & PROT_WRITE) == 0;
  }
  return memory;
}

void FakeAuxKernel::Unmap(void* address, size_t length) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& [fd, e] : events_) {
    if (e.aux == address) e.aux = nullptr;
    if (e.page == address) e.page = nullptr;
  }
  munmap(address, length);
}

int FakeAuxKernel::Ioctl(int fd, unsigned long request, unsigned long arg) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = events_.find(fd);
  if (it == events_.end()) {
    errno = EBADF;
    return -1;
  }
  Event& e = it->second;
  if (request == PERF_EVENT_IOC_ENABLE) {
    e.enabled = true;
    if (!mappings_written_ && it == events_.begin() && e.page) {
      mappings_written_ = true;
      for (const FakeMapping& m : mappings_) {
        std::vector<uint8_t> body;
        Put(body, int32_t{e.pid}), Put(body, int32_t{e.pid});
        Put(body, m.address), Put(body, m.length), Put(body, m.pgoff);
        Put(body, uint32_t{0}), Put(body, uint32_t{0});  // maj, min
        Put(body, uint64_t{0}), Put(body, uint64_t{0});  // ino, ino_generation
        Put(body, uint32_t{PROT_READ | PROT_EXEC}), Put(body, uint32_t{MAP_PRIVATE});
        body.insert(body.end(), m.filename.begin(), m.filename.end());
        body.resize((body.size() + 1 + 7) / 8 * 8, 0);
        WriteRecord(e, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, body);
      }
    }
  } else if (request == PERF_EVENT_IOC_DISABLE) {
    e.enabled = false;
    if (!e.overwrite) ReportAux(e, 0);
  } else if (request == PERF_EVENT_IOC_PAUSE_OUTPUT) {
    e.paused = arg != 0;
    const uint64_t head = e.page ? static_cast<perf_event_mmap_page*>(e.page)->aux_head : 0;
    if (e.paused && head > e.reported) {  // the kernel reports the data written so far
      const uint64_t size = std::min<uint64_t>(head - e.reported, e.aux_length);
      std::vector<uint8_t> body;
      Put(body, head - size), Put(body, size), Put(body, uint64_t{PERF_AUX_FLAG_OVERWRITE});
      WriteRecord(e, PERF_RECORD_AUX, 0, body);
      e.reported = head;
    }
  } else {
    errno = ENOTTY;
    return -1;
  }
  return 0;
}

int FakeAuxKernel::IoctlText(int fd, unsigned long, const char*) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!events_.count(fd)) {
    errno = EBADF;
    return -1;
  }
  return 0;  // an address filter: the replayed stream is what it is
}

void FakeAuxKernel::Close(int fd) {
  std::lock_guard<std::mutex> lock(mutex_);
  events_.erase(fd);
}

uint64_t FakeAuxKernel::Written(int fd) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = events_.find(fd);
  return it == events_.end() ? 0 : it->second.fed;
}

void FakeAuxKernel::Feed() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_) {
    for (auto& [fd, e] : events_) {
      if (e.enabled && e.page && ++e.ticks % 10 == 0) {  // the scheduler's tick
        WriteSwitch(e, true);
        WriteSwitch(e, false);
      }
      if (!e.enabled || e.paused || !e.aux || !e.page || e.fed >= trace_.size()) continue;
      const uint64_t n = std::min<uint64_t>(bytes_per_ms_, trace_.size() - e.fed);
      auto* meta = static_cast<perf_event_mmap_page*>(e.page);
      uint64_t head = meta->aux_head;
      if (!e.overwrite) {
        const uint64_t tail = __atomic_load_n(&meta->aux_tail, __ATOMIC_ACQUIRE);
        if (e.aux_length - (head - tail) < n) {  // full: this piece of trace is lost
          e.fed += n;
          ReportAux(e, PERF_AUX_FLAG_TRUNCATED);
          continue;
        }
      }
      for (uint64_t i = 0; i < n; ++i) e.aux[(head + i) % e.aux_length] = trace_[e.fed + i];
      e.fed += n;
      __atomic_store_n(&meta->aux_head, head + n, __ATOMIC_RELEASE);
    }
    stop_cv_.wait_for(lock, std::chrono::milliseconds(1));
  }
}

}  // namespace ptprof::record::hw
