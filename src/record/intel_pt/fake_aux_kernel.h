#pragma once
// FakeAuxKernel answers "what would the recorder do on trace hardware?" on machines without it:
// a PerfKernel whose AUX events behave like the kernel's overwrite-mode AUX ring (aux_head counts
// every byte written, the ring wraps, PERF_EVENT_IOC_PAUSE_OUTPUT stops the writing, ENABLE and
// DISABLE start and stop it) but whose bytes come from a recorded PT stream, fed at a fixed rate
// by a thread while the event is enabled. The mmap page publishes an identity TSC conversion
// (time_mult 1, time_shift 0, time_zero 0). Each event replays the stream from its start and
// stops at its end. The sideband ring gets what the kernel would write there, laid out by the
// event's sample_type: the replayed recording's code mappings as MMAP2 records of the traced
// process (first event only, when it is first enabled; they tell the decoder where the code of
// a stream recorded elsewhere was), an AUX record (flag OVERWRITE) whenever output is paused,
// and, when the attr asks for context switches, a switch out and back in (SWITCH, or
// SWITCH_CPU_WIDE to and from the idle task for a per-CPU event) every 10 ms the event is enabled.
//
// An AUX area mapped writable is the kernel's normal mode instead: the feeder writes a piece only
// where it fits before the aux_tail the reader publishes; a piece that does not fit is lost, as
// trace is when a real AUX area fills, and an AUX record flagged TRUNCATED says so. DISABLE then
// reports the data written since the last AUX record (flags 0).
//
// Selected by `ptprof record --backend intel_pt|cs_etm` when $PTPROF_FAKE_AUX names a .ptar or a
// perf.data whose first stream is replayed (docs/recording.md, "Testing without trace
// hardware"); the output says so.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "src/record/intel_pt/perf_kernel.h"

namespace ptprof::record::hw {

// An executable mapping the replayed recording's process had.
struct FakeMapping {
  uint64_t address = 0, length = 0, pgoff = 0;
  std::string filename;
};

class FakeAuxKernel : public PerfKernel {
 public:
  FakeAuxKernel(std::vector<uint8_t> trace, uint64_t bytes_per_ms,
                std::vector<FakeMapping> mappings = {});
  ~FakeAuxKernel() override;

  int Open(const void* attr, pid_t pid, int cpu) override;
  void* Map(int fd, size_t length, int prot, off_t offset) override;
  void Unmap(void* address, size_t length) override;
  int Ioctl(int fd, unsigned long request, unsigned long arg) override;
  int IoctlText(int fd, unsigned long request, const char* text) override;
  void Close(int fd) override;

  // Bytes of the stream event `fd` has written so far (its aux_head).
  uint64_t Written(int fd);

 private:
  struct Event {
    uint64_t sample_type = 0;  // of the attr it was opened with
    bool sample_id_all = false;
    bool context_switch = false;
    unsigned ticks = 0;  // feeder rounds while enabled
    pid_t pid = -1;
    int cpu = -1;
    uint64_t reported = 0;  // aux_head at the last AUX record
    void* page = nullptr;  // the perf mmap page (and the sideband ring after it)
    size_t page_length = 0;
    uint8_t* aux = nullptr;
    size_t aux_length = 0;
    uint64_t fed = 0;  // bytes of trace_ written
    bool enabled = false;
    bool paused = false;
    bool overwrite = true;  // the AUX area mapped read-only (snapshot mode)
  };
  // Writes an AUX record for the data since the last one (normal mode).
  void ReportAux(Event& e, uint64_t flags);
  void Feed();
  // A switch out of (or into) the traced task.
  void WriteSwitch(Event& e, bool out);
  // Appends a record (header, `body`, the sample_id trailer) to the event's sideband ring.
  void WriteRecord(Event& e, uint32_t type, uint16_t misc, const std::vector<uint8_t>& body);

  std::vector<uint8_t> trace_;
  std::vector<FakeMapping> mappings_;
  bool mappings_written_ = false;
  uint64_t bytes_per_ms_;
  std::mutex mutex_;
  std::condition_variable stop_cv_;
  std::map<int, Event> events_;
  int next_fd_ = 1000;
  bool stop_ = false;
  std::thread feeder_;
};

}  // namespace ptprof::record::hw
