#include "src/record/intel_pt/perf_kernel.h"

#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace ptprof::record::hw {

namespace {

class SystemPerfKernel : public PerfKernel {
 public:
  int Open(const void* attr, pid_t pid, int cpu) override {
    return static_cast<int>(syscall(SYS_perf_event_open, attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC));
  }
  void* Map(int fd, size_t length, int prot, off_t offset) override {
    return mmap(nullptr, length, prot, MAP_SHARED, fd, offset);
  }
  void Unmap(void* address, size_t length) override { munmap(address, length); }
  int Ioctl(int fd, unsigned long request, unsigned long arg) override {
    return ioctl(fd, request, arg);
  }
  int IoctlText(int fd, unsigned long request, const char* text) override {
    return ioctl(fd, request, text);
  }
  void Close(int fd) override { close(fd); }
};

}  // namespace

PerfKernel& RealPerfKernel() {
  static SystemPerfKernel kernel;
  return kernel;
}

}  // namespace ptprof::record::hw
