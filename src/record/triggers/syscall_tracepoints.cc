#include "src/record/triggers/syscall_tracepoints.h"

#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>

#include <fmt/format.h>

#include "src/record/triggers/perf_ring.h"
#include "src/record/triggers/tracefs.h"

namespace ptprof::record::triggers {

namespace {

long PerfEventOpen(perf_event_attr* attr, pid_t pid, int cpu, int group, unsigned long flags) {
  return syscall(SYS_perf_event_open, attr, pid, cpu, group, flags);
}

std::string ReadFirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

constexpr uint64_t kSampleType =
    PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_RAW;

}  // namespace

std::vector<int> OnlineCpus() {
  std::vector<int> cpus;
  std::string text = ReadFirstLine("/sys/devices/system/cpu/online");
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find(',', at);
    if (end == std::string::npos) end = text.size();
    std::string part = text.substr(at, end - at);
    const size_t dash = part.find('-');
    const int first = std::atoi(part.c_str());
    const int last = dash == std::string::npos ? first : std::atoi(part.c_str() + dash + 1);
    for (int c = first; c <= last; ++c) cpus.push_back(c);
    at = end + 1;
  }
  if (cpus.empty())
    for (long c = 0; c < sysconf(_SC_NPROCESSORS_ONLN); ++c) cpus.push_back(static_cast<int>(c));
  return cpus;
}

std::string PerfOpenErrorText(int error, const std::string& what) {
  const std::string paranoid = ReadFirstLine("/proc/sys/kernel/perf_event_paranoid");
  if (error == EACCES || error == EPERM)
    return fmt::format("{}: perf_event_open: {} (perf_event_paranoid is {}: tracepoints need "
                       "perf_event_paranoid <= -1 or CAP_PERFMON / CAP_SYS_ADMIN; try "
                       "`sysctl kernel.perf_event_paranoid=-1` or run as root)",
                       what, std::strerror(error), paranoid.empty() ? "unknown" : paranoid);
  if (error == ENOENT || error == ENODEV || error == EOPNOTSUPP)
    return fmt::format("{}: perf_event_open: {} (this kernel or CPU does not provide the event)",
                       what, std::strerror(error));
  if (error == EMFILE)
    return fmt::format("{}: perf_event_open: too many open files (raise `ulimit -n`)", what);
  return fmt::format("{}: perf_event_open: {}", what, std::strerror(error));
}

struct SyscallTracepoints::Ring {
  int enter_fd = -1;
  int exit_fd = -1;  // writes into enter_fd's ring (PERF_EVENT_IOC_SET_OUTPUT)
  void* base = nullptr;
  size_t length = 0;
  size_t data_size = 0;
  ~Ring() {
    if (base) munmap(base, length);
    if (exit_fd >= 0) close(exit_fd);
    if (enter_fd >= 0) close(enter_fd);
  }
};

std::string SyscallFilterText(const std::vector<uint64_t>& syscalls) {
  std::string text;
  for (uint64_t nr : syscalls) text += fmt::format("{}id == {}", text.empty() ? "" : " || ", nr);
  return text;
}

Result<std::unique_ptr<SyscallTracepoints>> SyscallTracepoints::Open(pid_t pid,
                                                                     const Options& options) {
  auto tracefs = FindTracefs(options.mount_tracefs);
  if (!tracefs) return tl::unexpected(tracefs.error());
  std::unique_ptr<SyscallTracepoints> self(new SyscallTracepoints());
  auto enter = ReadTracepointId(*tracefs, "raw_syscalls", "sys_enter");
  if (!enter) return tl::unexpected(enter.error());
  auto exit = ReadTracepointId(*tracefs, "raw_syscalls", "sys_exit");
  if (!exit) return tl::unexpected(exit.error());
  auto enter_nr = ReadTracepointField(*tracefs, "raw_syscalls", "sys_enter", "id");
  if (!enter_nr) return tl::unexpected(enter_nr.error());
  auto exit_nr = ReadTracepointField(*tracefs, "raw_syscalls", "sys_exit", "id");
  if (!exit_nr) return tl::unexpected(exit_nr.error());
  self->enter_id_ = *enter;
  self->exit_id_ = *exit;
  self->enter_nr_offset_ = enter_nr->offset;
  self->exit_nr_offset_ = exit_nr->offset;

  const bool per_cpu = options.scope == Scope::kPerCpu;
  const std::string filter = SyscallFilterText(options.only_syscalls);
  std::vector<int> cpus = per_cpu ? OnlineCpus() : std::vector<int>{-1};
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  for (int cpu : cpus) {
    auto ring = std::make_unique<Ring>();
    for (int which = 0; which < 2; ++which) {
      perf_event_attr attr{};
      attr.size = sizeof attr;
      attr.type = PERF_TYPE_TRACEPOINT;
      attr.config = which == 0 ? *enter : *exit;
      attr.sample_period = 1;
      attr.sample_type = kSampleType;
      attr.disabled = 1;
      attr.enable_on_exec = options.enable_on_exec ? 1 : 0;
      attr.inherit = per_cpu ? 1 : 0;
      attr.use_clockid = 1;
      attr.clockid = CLOCK_MONOTONIC;
      attr.wakeup_events = 1;
      const long fd = PerfEventOpen(&attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
      if (fd < 0)
        return Fail(PerfOpenErrorText(errno, fmt::format("raw_syscalls:{} (pid {}, cpu {})",
                                                         which == 0 ? "sys_enter" : "sys_exit",
                                                         pid, cpu)));
      (which == 0 ? ring->enter_fd : ring->exit_fd) = static_cast<int>(fd);
      if (!filter.empty() && ioctl(static_cast<int>(fd), PERF_EVENT_IOC_SET_FILTER, filter.c_str()) != 0)
        return Fail(fmt::format("raw_syscalls:{} (cpu {}): PERF_EVENT_IOC_SET_FILTER '{}': {}",
                                which == 0 ? "sys_enter" : "sys_exit", cpu, filter,
                                std::strerror(errno)));
    }
    ring->data_size = page * options.ring_pages;
    ring->length = ring->data_size + page;
    ring->base = mmap(nullptr, ring->length, PROT_READ | PROT_WRITE, MAP_SHARED, ring->enter_fd, 0);
    if (ring->base == MAP_FAILED) {
      ring->base = nullptr;
      return Fail(fmt::format("raw_syscalls ring (cpu {}): mmap of {} bytes: {} (the locked-memory "
                              "limit is /proc/sys/kernel/perf_event_mlock_kb)",
                              cpu, ring->length, std::strerror(errno)));
    }
    if (ioctl(ring->exit_fd, PERF_EVENT_IOC_SET_OUTPUT, ring->enter_fd) != 0)
      return Fail(fmt::format("raw_syscalls:sys_exit (cpu {}): PERF_EVENT_IOC_SET_OUTPUT: {}", cpu,
                              std::strerror(errno)));
    self->rings_.push_back(std::move(ring));
  }
  return self;
}

SyscallTracepoints::~SyscallTracepoints() = default;

Status SyscallTracepoints::Enable() {
  for (auto& ring : rings_)
    for (int fd : {ring->enter_fd, ring->exit_fd})
      if (ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) != 0)
        return Fail(fmt::format("raw_syscalls: PERF_EVENT_IOC_ENABLE: {}", std::strerror(errno)));
  return {};
}

Status SyscallTracepoints::Disable() {
  for (auto& ring : rings_)
    for (int fd : {ring->enter_fd, ring->exit_fd})
      if (ioctl(fd, PERF_EVENT_IOC_DISABLE, 0) != 0)
        return Fail(fmt::format("raw_syscalls: PERF_EVENT_IOC_DISABLE: {}", std::strerror(errno)));
  return {};
}

std::vector<int> SyscallTracepoints::Fds() const {
  std::vector<int> fds;
  for (const auto& ring : rings_) fds.push_back(ring->enter_fd);
  return fds;
}

void SyscallTracepoints::DrainRing(Ring& ring, std::vector<TriggerEvent>& out) {
  DrainPerfRing(ring.base, ring.data_size, [&](const uint8_t* data, size_t size, uint32_t type) {
    auto u32 = [&](size_t at) { uint32_t v = 0; if (at + 4 <= size) std::memcpy(&v, data + at, 4); return v; };
    auto u64 = [&](size_t at) { uint64_t v = 0; if (at + 8 <= size) std::memcpy(&v, data + at, 8); return v; };
    if (type == PERF_RECORD_LOST) {
      lost_ += u64(16);
      return;
    }
    if (type != PERF_RECORD_SAMPLE) return;
    // TID (pid, tid), TIME, CPU (cpu, res), RAW (size, bytes): the order of sample_type bits.
    TriggerEvent event;
    event.tid = u32(12);
    event.time_ns = u64(16);
    const uint32_t raw_size = u32(32);
    const size_t raw = 36;
    if (raw + raw_size > size || raw_size < 2) return;
    uint16_t common_type = 0;
    std::memcpy(&common_type, data + raw, 2);
    const bool is_enter = common_type == enter_id_;
    if (!is_enter && common_type != exit_id_) return;
    const uint32_t nr_at = is_enter ? enter_nr_offset_ : exit_nr_offset_;
    if (nr_at + 8 > raw_size) return;
    event.kind = is_enter ? TriggerEvent::Kind::kSyscallEnter : TriggerEvent::Kind::kSyscallExit;
    event.syscall = u64(raw + nr_at);
    out.push_back(event);
  });
}

void SyscallTracepoints::Drain(std::vector<TriggerEvent>& out) {
  const size_t first = out.size();
  for (auto& ring : rings_) DrainRing(*ring, out);
  std::stable_sort(out.begin() + static_cast<std::ptrdiff_t>(first), out.end(),
                   [](const TriggerEvent& a, const TriggerEvent& b) { return a.time_ns < b.time_ns; });
}

}  // namespace ptprof::record::triggers
