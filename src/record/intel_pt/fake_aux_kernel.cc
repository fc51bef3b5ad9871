#include "src/record/intel_pt/fake_aux_kernel.h"

#include <linux/perf_event.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

namespace ptprof::record::hw {

FakeAuxKernel::FakeAuxKernel(std::vector<uint8_t> trace, uint64_t bytes_per_ms)
    : trace_(std::move(trace)), bytes_per_ms_(std::max<uint64_t>(1, bytes_per_ms)) {
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

int FakeAuxKernel::Open(const void*, pid_t, int) {
  std::lock_guard<std::mutex> lock(mutex_);
  const int fd = next_fd_++;
  events_[fd] = Event{};
  return fd;
}

void* FakeAuxKernel::Map(int fd, size_t length, int, off_t offset) {
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
  if (request == PERF_EVENT_IOC_ENABLE) it->second.enabled = true;
  else if (request == PERF_EVENT_IOC_DISABLE) it->second.enabled = false;
  else if (request == PERF_EVENT_IOC_PAUSE_OUTPUT) it->second.paused = arg != 0;
  else {
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
      if (!e.enabled || e.paused || !e.aux || !e.page || e.fed >= trace_.size()) continue;
      const uint64_t n = std::min<uint64_t>(bytes_per_ms_, trace_.size() - e.fed);
      auto* meta = static_cast<perf_event_mmap_page*>(e.page);
      uint64_t head = meta->aux_head;
      for (uint64_t i = 0; i < n; ++i) e.aux[(head + i) % e.aux_length] = trace_[e.fed + i];
      e.fed += n;
      __atomic_store_n(&meta->aux_head, head + n, __ATOMIC_RELEASE);
    }
    stop_cv_.wait_for(lock, std::chrono::milliseconds(1));
  }
}

}  // namespace ptprof::record::hw
