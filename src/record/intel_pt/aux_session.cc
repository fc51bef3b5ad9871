#include "src/record/intel_pt/aux_session.h"

#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "src/record/intel_pt/aux_snapshot.h"
#include "src/record/triggers/perf_ring.h"
#include "src/record/triggers/syscall_tracepoints.h"

namespace ptprof::record::hw {

namespace {
// perf_event_attr with config3 (PERF_ATTR_SIZE_VER8, Linux 6.3+) when it is used, else as is.
constexpr size_t kAttrSizeVer8 = 136;

int OpenEvent(PerfKernel& kernel, const HwAttr& attr, pid_t pid, int cpu) {
  alignas(8) uint8_t bytes[kAttrSizeVer8] = {};
  static_assert(sizeof(perf_event_attr) <= kAttrSizeVer8);
  std::memcpy(bytes, &attr.attr, sizeof attr.attr);
  auto* raw = reinterpret_cast<perf_event_attr*>(bytes);
  if (attr.config3 != 0) {
    raw->size = kAttrSizeVer8;
    std::memcpy(bytes + kAttrSizeVer8 - 8, &attr.config3, 8);
  }
  return kernel.Open(raw, pid, cpu);
}
}  // namespace

struct AuxSession::Event {
  PerfKernel* kernel = nullptr;
  int cpu = -1;
  int fd = -1;
  void* base = nullptr;
  size_t base_length = 0;
  void* aux = nullptr;
  size_t aux_length = 0;
  ~Event() {
    if (aux) kernel->Unmap(aux, aux_length);
    if (base) kernel->Unmap(base, base_length);
    if (fd >= 0) kernel->Close(fd);
  }
  perf_event_mmap_page* page() const { return static_cast<perf_event_mmap_page*>(base); }
};

Result<std::unique_ptr<AuxSession>> AuxSession::Open(const HwAttr& attr, pid_t pid,
                                                     const std::vector<int>& cpus,
                                                     const Options& options,
                                                     PerfKernel& kernel) {
  std::unique_ptr<AuxSession> self(new AuxSession());
  self->kernel_ = &kernel;
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  for (int cpu : cpus) {
    auto event = std::make_unique<Event>();
    event->kernel = &kernel;
    event->cpu = cpu;
    const int fd = OpenEvent(kernel, attr, pid, cpu);
    if (fd < 0)
      return Fail(triggers::PerfOpenErrorText(
          errno, fmt::format("AUX event type {} config {:#x} (cpu {})", attr.attr.type,
                             attr.attr.config, cpu)));
    event->fd = fd;
    event->base_length = page * (1 + options.data_pages);
    event->base = kernel.Map(event->fd, event->base_length, PROT_READ | PROT_WRITE, 0);
    if (event->base == MAP_FAILED) {
      event->base = nullptr;
      return Fail(fmt::format("cpu {}: mmap of the sideband ring ({} bytes): {}", cpu,
                              event->base_length, std::strerror(errno)));
    }
    perf_event_mmap_page* meta = event->page();
    meta->aux_offset = event->base_length;
    meta->aux_size = static_cast<uint64_t>(page) * options.aux_pages;
    event->aux_length = meta->aux_size;
    const int prot = options.snapshot ? PROT_READ : PROT_READ | PROT_WRITE;
    event->aux = kernel.Map(event->fd, event->aux_length, prot, static_cast<off_t>(meta->aux_offset));
    if (event->aux == MAP_FAILED) {
      event->aux = nullptr;
      return Fail(fmt::format("cpu {}: mmap of the AUX area ({} bytes): {} (raise "
                              "kernel.perf_event_mlock_kb or use a smaller --pre)",
                              cpu, event->aux_length, std::strerror(errno)));
    }
    if (!attr.filter.empty() &&
        kernel.IoctlText(event->fd, PERF_EVENT_IOC_SET_FILTER, attr.filter.c_str()) != 0)
      return Fail(fmt::format("--filter '{}': PERF_EVENT_IOC_SET_FILTER: {}", attr.filter,
                              std::strerror(errno)));
    self->events_.push_back(std::move(event));
  }
  return self;
}

AuxSession::~AuxSession() = default;

int AuxSession::cpu(size_t index) const { return events_.at(index)->cpu; }

Status AuxSession::Enable() {
  for (auto& e : events_)
    if (kernel_->Ioctl(e->fd, PERF_EVENT_IOC_ENABLE, 0) != 0)
      return Fail(fmt::format("cpu {}: PERF_EVENT_IOC_ENABLE: {}", e->cpu, std::strerror(errno)));
  return {};
}

Status AuxSession::Disable() {
  for (auto& e : events_)
    if (kernel_->Ioctl(e->fd, PERF_EVENT_IOC_DISABLE, 0) != 0)
      return Fail(fmt::format("cpu {}: PERF_EVENT_IOC_DISABLE: {}", e->cpu, std::strerror(errno)));
  return {};
}

Result<std::vector<uint8_t>> AuxSession::Snapshot(size_t index, uint64_t want, uint64_t align) {
  Event& e = *events_.at(index);
  if (kernel_->Ioctl(e.fd, PERF_EVENT_IOC_PAUSE_OUTPUT, 1) != 0)
    return Fail(fmt::format("cpu {}: PERF_EVENT_IOC_PAUSE_OUTPUT: {}", e.cpu, std::strerror(errno)));
  const uint64_t head = __atomic_load_n(&e.page()->aux_head, __ATOMIC_ACQUIRE);
  if (align > 1) {  // start the copy on a multiple of `align` bytes since the trace began
    const uint64_t n = std::min<uint64_t>({want, head, e.aux_length});
    const uint64_t skip = (align - (head - n) % align) % align;
    want = n >= skip ? n - skip : 0;
  }
  std::vector<uint8_t> bytes =
      LinearizeAuxRing(static_cast<const uint8_t*>(e.aux), e.aux_length, head, want);
  if (kernel_->Ioctl(e.fd, PERF_EVENT_IOC_PAUSE_OUTPUT, 0) != 0)
    return Fail(fmt::format("cpu {}: resuming the output: {}", e.cpu, std::strerror(errno)));
  return bytes;
}

uint64_t AuxSession::DrainAux(size_t index, std::vector<uint8_t>& out) {
  Event& e = *events_.at(index);
  perf_event_mmap_page* page = e.page();
  const uint64_t head = __atomic_load_n(&page->aux_head, __ATOMIC_ACQUIRE);
  const uint64_t tail = page->aux_tail;
  // In normal mode the kernel never runs more than the area ahead of the tail.
  std::vector<uint8_t> bytes =
      LinearizeAuxRing(static_cast<const uint8_t*>(e.aux), e.aux_length, head, head - tail);
  __atomic_store_n(&page->aux_tail, head, __ATOMIC_RELEASE);
  const uint64_t size = bytes.size();
  if (out.empty()) out = std::move(bytes);
  else out.insert(out.end(), bytes.begin(), bytes.end());
  return size;
}

void AuxSession::DrainSideband(size_t index, std::vector<uint8_t>& out) {
  Event& e = *events_.at(index);
  triggers::DrainPerfRing(e.base, 0, [&](const uint8_t* record, size_t size, uint32_t) {
    out.insert(out.end(), record, record + size);
  });
}

Result<perf::PerfClock> AuxSession::Clock(size_t index) const {
  return ClockFromMmapPage(*events_.at(index)->page());
}

}  // namespace ptprof::record::hw
