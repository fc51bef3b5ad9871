#pragma once
// PerfKernel is the seam between the hardware recorders and the kernel's perf_event interface:
// perf_event_open, mmap of an event's rings, its ioctls, close. RealPerfKernel() makes the system
// calls; tests substitute a kernel that replays a recorded trace into an AUX ring
// (fake_aux_kernel.h), which is how the recorder's loop is exercised on machines without trace
// hardware. Failures return -1 (MAP_FAILED for Map) with errno set, as the system calls do.
#include <sys/types.h>

#include <cstddef>

namespace ptprof::record::hw {

class PerfKernel {
 public:
  virtual ~PerfKernel() = default;
  // `attr` points to a perf_event_attr of attr->size bytes.
  virtual int Open(const void* attr, pid_t pid, int cpu) = 0;
  virtual void* Map(int fd, size_t length, int prot, off_t offset) = 0;
  virtual void Unmap(void* address, size_t length) = 0;
  virtual int Ioctl(int fd, unsigned long request, unsigned long arg) = 0;
  virtual int IoctlText(int fd, unsigned long request, const char* text) = 0;
  virtual void Close(int fd) = 0;
};

PerfKernel& RealPerfKernel();

}  // namespace ptprof::record::hw
