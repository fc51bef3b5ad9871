#include "src/record/swbt/perf_events.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace ptprof::swbt {

namespace {

// fcntl's F_SETOWN_EX argument (struct f_owner_ex), spelled out to stay independent of
// _GNU_SOURCE headers.
struct OwnerEx {
  int type;
  int pid;
};
constexpr int kOwnerTid = 0;  // F_OWNER_TID

// Routes the event's overflow signal to thread `tid` as `signal`; false on failure.
bool RouteSignal(int fd, int tid, int signal) {
  OwnerEx owner{kOwnerTid, tid};
  if (RawSyscall(SYS_fcntl, fd, F_SETOWN_EX, reinterpret_cast<long>(&owner)) < 0) return false;
  if (RawSyscall(SYS_fcntl, fd, F_SETSIG, signal) < 0) return false;
  const long flags = RawSyscall(SYS_fcntl, fd, F_GETFL);
  if (flags < 0) return false;
  return RawSyscall(SYS_fcntl, fd, F_SETFL, flags | O_ASYNC | O_NONBLOCK) >= 0;
}

int OpenEvent(perf_event_attr* attr, int tid, int signal) {
  const long fd = RawSyscall(SYS_perf_event_open, reinterpret_cast<long>(attr), tid, -1, -1,
                             PERF_FLAG_FD_CLOEXEC);
  if (fd < 0) return static_cast<int>(fd);
  if (!RouteSignal(static_cast<int>(fd), tid, signal)) {
    CloseFd(static_cast<int>(fd));
    return -EINVAL;
  }
  return static_cast<int>(fd);
}

}  // namespace

long RawSyscall(long number, long a1, long a2, long a3, long a4, long a5, long a6) {
  long ret;
  register long r10 asm("r10") = a4;
  register long r8 asm("r8") = a5;
  register long r9 asm("r9") = a6;
  asm volatile("syscall"
               : "=a"(ret)
               : "a"(number), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8), "r"(r9)
               : "rcx", "r11", "memory");
  return ret;
}

int OpenSampler(int tid, uint64_t period_ns, int signal) {
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_TASK_CLOCK;
  attr.sample_period = period_ns;
  attr.disabled = 1;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  attr.wakeup_events = 1;
  return OpenEvent(&attr, tid, signal);
}

int OpenBreakpoint(int tid, uint64_t placeholder, int signal, perf_event_attr* attr) {
  std::memset(attr, 0, sizeof *attr);
  attr->size = sizeof *attr;
  attr->type = PERF_TYPE_BREAKPOINT;
  attr->bp_type = 4;  // HW_BREAKPOINT_X
  attr->bp_addr = placeholder;
  attr->bp_len = sizeof(long);
  attr->sample_period = 1;
  attr->disabled = 1;
  attr->exclude_kernel = 1;
  attr->exclude_hv = 1;
  attr->wakeup_events = 1;
  return OpenEvent(attr, tid, signal);
}

bool ArmBreakpoint(int fd, perf_event_attr* attr, uint64_t address) {
  // One ioctl moves and enables it. (PERF_EVENT_IOC_REFRESH does not re-arm a breakpoint that
  // disabled itself after its event limit on this kernel: it stays enabled and is disabled
  // explicitly when a burst ends.)
  attr->bp_addr = address;
  attr->disabled = 0;
  return RawSyscall(SYS_ioctl, fd, PERF_EVENT_IOC_MODIFY_ATTRIBUTES, reinterpret_cast<long>(attr)) >= 0;
}

bool ArmOnce(int fd) { return RawSyscall(SYS_ioctl, fd, PERF_EVENT_IOC_REFRESH, 1) >= 0; }

void DisableEvent(int fd) {
  if (fd >= 0) RawSyscall(SYS_ioctl, fd, PERF_EVENT_IOC_DISABLE, 0);
}

void CloseFd(int fd) {
  if (fd >= 0) RawSyscall(SYS_close, fd);
}

size_t ReadOwnMemory(void*, uint64_t address, void* out, size_t size) {
  iovec local{out, size};
  iovec remote{reinterpret_cast<void*>(address), size};
  const long pid = RawSyscall(SYS_getpid);
  const long got = RawSyscall(SYS_process_vm_readv, pid, reinterpret_cast<long>(&local), 1,
                              reinterpret_cast<long>(&remote), 1, 0);
  return got > 0 ? static_cast<size_t>(got) : 0;
}

int CurrentTid() { return static_cast<int>(RawSyscall(SYS_gettid)); }

uint64_t ReadTsc() {
  uint32_t lo, hi;
  asm volatile("rdtsc" : "=a"(lo), "=d"(hi));
  return (uint64_t{hi} << 32) | lo;
}

}  // namespace ptprof::swbt
