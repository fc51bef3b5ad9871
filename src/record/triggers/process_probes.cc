#include "src/record/triggers/process_probes.h"

#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>

#include <fmt/format.h>

#include "src/record/triggers/perf_ring.h"
#include "src/record/triggers/syscall_tracepoints.h"
#include "src/record/triggers/tracefs.h"

namespace ptprof::record::triggers {

namespace {

constexpr uint64_t kBreakpointSample = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
constexpr uint64_t kSignalSample = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_RAW;

uint32_t U32(const uint8_t* p) { uint32_t v; std::memcpy(&v, p, 4); return v; }
uint64_t U64(const uint8_t* p) { uint64_t v; std::memcpy(&v, p, 8); return v; }

}  // namespace

bool ParseProbeSample(const uint8_t* record, size_t size, bool breakpoint, uint64_t signal_id,
                      uint32_t sig_offset, TriggerEvent& event) {
  const size_t header = sizeof(perf_event_header);
  if (breakpoint) {
    if (size < header + 24) return false;
    event = TriggerEvent{};
    event.kind = TriggerEvent::Kind::kBreakpoint;
    event.address = U64(record + header);
    event.tid = U32(record + header + 12);
    event.time_ns = U64(record + header + 16);
    return true;
  }
  if (size < header + 20) return false;
  const uint32_t raw_size = U32(record + header + 16);
  const size_t raw = header + 20;
  if (raw + raw_size > size || raw_size < 2 || sig_offset + 4 > raw_size) return false;
  uint16_t common_type = 0;
  std::memcpy(&common_type, record + raw, 2);
  if (common_type != signal_id) return false;
  event = TriggerEvent{};
  event.kind = TriggerEvent::Kind::kSignal;
  event.tid = U32(record + header + 4);
  event.time_ns = U64(record + header + 8);
  event.signal = static_cast<int>(U32(record + raw + sig_offset));
  return true;
}

struct ProcessProbes::Ring {
  int fd = -1;  // the ring's own event
  bool breakpoint = false;
  void* base = nullptr;
  size_t length = 0;
  size_t data_size = 0;
  ~Ring() {
    if (base) munmap(base, length);
    if (fd >= 0) close(fd);
  }
};

Result<std::unique_ptr<ProcessProbes>> ProcessProbes::Open(pid_t pid, const Options& options) {
  std::unique_ptr<ProcessProbes> self(new ProcessProbes());
  if (options.signals) {
    auto tracefs = FindTracefs(options.mount_tracefs);
    if (!tracefs) return tl::unexpected(tracefs.error());
    auto id = ReadTracepointId(*tracefs, "signal", "signal_deliver");
    if (!id) return tl::unexpected(id.error());
    auto sig = ReadTracepointField(*tracefs, "signal", "signal_deliver", "sig");
    if (!sig) return tl::unexpected(sig.error());
    self->signal_id_ = *id;
    self->sig_offset_ = sig->offset;
  }
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  auto open_one = [&](perf_event_attr attr, int cpu, bool breakpoint,
                      const std::string& what) -> Status {
    attr.size = sizeof attr;
    attr.sample_period = 1;
    attr.disabled = 1;
    attr.enable_on_exec = options.enable_on_exec ? 1 : 0;
    attr.inherit = 1;
    attr.use_clockid = 1;
    attr.clockid = CLOCK_MONOTONIC;
    attr.wakeup_events = 1;
    attr.exclude_kernel = breakpoint ? 1 : 0;
    attr.exclude_hv = 1;
    const long fd = syscall(SYS_perf_event_open, &attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0) {
      const int error = errno;
      if (breakpoint && error == ENOSPC)
        return Fail(fmt::format("{}: no free hardware breakpoint slot (x86 has four)", what));
      return Fail(PerfOpenErrorText(error, what));
    }
    auto ring = std::make_unique<Ring>();
    ring->fd = static_cast<int>(fd);
    ring->breakpoint = breakpoint;
    ring->data_size = page * options.ring_pages;
    ring->length = ring->data_size + page;
    ring->base = mmap(nullptr, ring->length, PROT_READ | PROT_WRITE, MAP_SHARED, ring->fd, 0);
    if (ring->base == MAP_FAILED) {
      ring->base = nullptr;
      return Fail(fmt::format("{}: mmap of {} bytes: {} (the locked-memory limit is "
                              "/proc/sys/kernel/perf_event_mlock_kb)",
                              what, ring->length, std::strerror(errno)));
    }
    self->rings_.push_back(std::move(ring));
    return {};
  };
  for (int cpu : OnlineCpus()) {
    for (uint64_t address : options.breakpoints) {
      perf_event_attr attr{};
      attr.type = PERF_TYPE_BREAKPOINT;
      attr.bp_type = HW_BREAKPOINT_X;
      attr.bp_addr = address;
      attr.bp_len = sizeof(long);
      attr.sample_type = kBreakpointSample;
      if (auto st = open_one(attr, cpu, true,
                             fmt::format("breakpoint at {:#x} (pid {}, cpu {})", address, pid, cpu));
          !st)
        return tl::unexpected(st.error());
    }
    if (options.signals) {
      perf_event_attr attr{};
      attr.type = PERF_TYPE_TRACEPOINT;
      attr.config = self->signal_id_;
      attr.sample_type = kSignalSample;
      if (auto st = open_one(attr, cpu, false,
                             fmt::format("signal:signal_deliver (pid {}, cpu {})", pid, cpu));
          !st)
        return tl::unexpected(st.error());
    }
  }
  return self;
}

ProcessProbes::~ProcessProbes() = default;

Status ProcessProbes::Enable() {
  for (auto& ring : rings_)
    if (ioctl(ring->fd, PERF_EVENT_IOC_ENABLE, 0) != 0)
      return Fail(fmt::format("probes: PERF_EVENT_IOC_ENABLE: {}", std::strerror(errno)));
  return {};
}

std::vector<int> ProcessProbes::Fds() const {
  std::vector<int> fds;
  for (const auto& ring : rings_) fds.push_back(ring->fd);
  return fds;
}

void ProcessProbes::DrainRing(Ring& ring, std::vector<TriggerEvent>& out) {
  DrainPerfRing(ring.base, ring.data_size, [&](const uint8_t* record, size_t size, uint32_t type) {
    if (type == PERF_RECORD_LOST) {
      if (size >= 24) lost_ += U64(record + 16);
      return;
    }
    TriggerEvent event;
    if (type == PERF_RECORD_SAMPLE &&
        ParseProbeSample(record, size, ring.breakpoint, signal_id_, sig_offset_, event))
      out.push_back(event);
  });
}

void ProcessProbes::Drain(std::vector<TriggerEvent>& out) {
  const size_t first = out.size();
  for (auto& ring : rings_) DrainRing(*ring, out);
  std::stable_sort(out.begin() + static_cast<std::ptrdiff_t>(first), out.end(),
                   [](const TriggerEvent& a, const TriggerEvent& b) { return a.time_ns < b.time_ns; });
}

}  // namespace ptprof::record::triggers
