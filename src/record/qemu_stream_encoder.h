#pragma once
// QemuStreamEncoder answers "what PT did every thread of the recorded program produce?" while the
// plugin's stream arrives: exec chunks go to one QemuThreadEncoder per thread as they are read, so
// the words are encoded once and dropped (memory bounded by the translated code, not by the run).
// A thread created by clone starts at its creator's time at the clone; its words wait until the
// creator's clone return has been read (the two threads' chunks can come in either order).
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "src/model/result.h"
#include "src/record/qemu_flow.h"
#include "src/record/qemu_stream.h"

namespace ptprof::record {

class QemuStreamEncoder {
 public:
  // `stream` is the reader's stream (its blocks grow as chunks are read).
  QemuStreamEncoder(const QemuStream& stream, const QemuFlowOptions& options);
  ~QemuStreamEncoder();

  // One exec chunk of thread `tid`.
  Status OnExec(uint32_t tid, const uint32_t* words, size_t count);
  // A trigger event observed outside the stream (a signal's delivery to thread `event.tid`): it
  // reaches that thread's trigger decisions when its stream reaches the event's host time. It
  // waits while that thread has not started (the recorder can see a short program's signals
  // before any of its stream); one for a thread the whole stream never shows goes to the first
  // thread.
  Status OnTriggerEvent(const triggers::TriggerEvent& event);
  // The stream ended: every thread's trace, in the order the threads first appeared.
  Result<std::vector<QemuThreadTrace>> Finish();

 private:
  struct Thread {
    uint32_t tid = 0;
    std::unique_ptr<QemuThreadEncoder> encoder;  // null until the start time is known
    std::vector<uint32_t> held;                  // words that wait for the start time
    std::unique_ptr<QemuThreadTrace> trace;      // after Finish
  };
  Status Start(Thread& thread, uint64_t tsc_begin);
  Status TakeClones(Thread& thread);
  // Hands the waiting trigger events to their threads' encoders, once those exist.
  void DeliverEvents();

  const QemuStream& stream_;
  const QemuFlowOptions& options_;
  QemuBlockCache cache_;
  std::vector<std::unique_ptr<Thread>> threads_;  // in first-appearance order
  std::map<uint32_t, Thread*> by_tid_;
  std::map<uint32_t, uint64_t> clone_times_;  // child tid -> its creator's time at the clone
  std::vector<triggers::TriggerEvent> waiting_;  // for threads not started yet
  bool resolved_ = false;  // addr=SYMBOL triggers resolved (when the first thread starts)
};

}  // namespace ptprof::record
