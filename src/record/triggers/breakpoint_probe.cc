#include "src/record/triggers/breakpoint_probe.h"

#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace ptprof::record::triggers {

namespace {

__attribute__((noinline)) void Probed(volatile int* calls) {
  *calls = *calls + 1;
  asm volatile("" ::: "memory");
}

}  // namespace

bool ExecuteBreakpointsFire(std::string* why) {
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_BREAKPOINT;
  attr.bp_type = HW_BREAKPOINT_X;
  attr.bp_addr = reinterpret_cast<uintptr_t>(&Probed);
  attr.bp_len = sizeof(long);
  attr.disabled = 1;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  const int fd = static_cast<int>(syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC));
  if (fd < 0) {
    if (why) *why = std::string("perf_event_open of an execute breakpoint failed: ") + std::strerror(errno);
    return false;
  }
  ioctl(fd, PERF_EVENT_IOC_RESET, 0);
  ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
  volatile int calls = 0;
  for (int i = 0; i < 3; ++i) Probed(&calls);
  ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
  uint64_t hits = 0;
  const bool read_ok = read(fd, &hits, sizeof hits) == static_cast<ssize_t>(sizeof hits);
  close(fd);
  if (read_ok && hits == 3) return true;
  if (why)
    *why = "hardware execute breakpoints do not fire on this machine (one on ptprof's own code counted " +
           (read_ok ? std::to_string(hits) : std::string("nothing readable")) + " of 3 calls)";
  return false;
}

}  // namespace ptprof::record::triggers
