#pragma once
// EncodeQemuThread answers "what PT trace would user-only Intel PT have written for this thread?"
// from the blocks QEMU executed: it expands each executed block into its instructions, classifies
// them (X86Decoder, once per translated block), works out where each went (the next executed
// block, a rep-string repetition, a signal) and feeds TraceEncoder. Time comes from a cycle model:
// `cycles_per_insn` core cycles per instruction, the TSC running at the core clock (emulated time,
// not the host's).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "decoders/pt/trace_encoder.h"
#include "src/model/result.h"
#include "src/record/qemu_stream.h"
#include "src/record/triggers/trigger_engine.h"

namespace ptprof::record {

struct QemuFlowOptions {
  pt::EncoderOptions encoder;
  uint32_t cycles_per_insn = 1;
  bool keep_ips = false;  // also return every instruction address (for round-trip checks)
  // Snapshot mode (buffer_size > 0): the trace goes into a ring of buffer_size bytes; a trigger
  // cuts a snapshot from the ring's first PSB to the trigger, and the thread's end cuts a last one.
  uint64_t buffer_size = 0;
  std::vector<uint64_t> snapshot_syscalls;  // trigger after these syscall numbers
  uint64_t snapshot_every_insns = 0;        // trigger every N instructions (0: never)
  // The trigger engine of the recording (--snapshot-on, --post, --max-snapshots, --min-interval),
  // shared by its threads, or null. It sees each syscall's entry and exit at the host's
  // CLOCK_MONOTONIC time the plugin measured around it (kTagHostTime), and instruction counts.
  // A cut happens once the host time reaches the decision's cut_ns and after at least one more
  // instruction, so a syscall-latency snapshot holds the slow syscall and its return; with --post
  // the cut waits for the thread's first syscall event at or after cut_ns (or its end).
  triggers::TriggerEngine* triggers = nullptr;
};

struct QemuSnapshot {
  std::vector<uint8_t> pt;  // starts at a PSB
  std::string label;        // what triggered it: "syscall=1", "insns=1000000", "end"
  uint64_t tsc = 0;         // the time of the trigger
  uint64_t insns = 0;       // instructions of the thread before the trigger
  uint64_t host_ns = 0;     // host CLOCK_MONOTONIC time of the trigger (0: unknown)
  uint64_t latency_ns = 0;  // syscall-latency triggers: how long the syscall took
};

struct QemuThreadTrace {
  uint32_t tid = 0;
  std::vector<uint8_t> pt;            // the whole trace (empty in snapshot mode)
  std::vector<QemuSnapshot> snapshots;  // snapshot mode
  pt::EncoderStats stats;
  std::vector<uint64_t> ips;    // with keep_ips: what a PT decoder must report, in order
  uint64_t insns = 0;           // instructions encoded
  uint64_t rep_repeats = 0;     // rep-string iterations folded into one instruction
  uint64_t signals = 0;         // asynchronous transfers
  uint64_t page_crossings = 0;  // executions of blocks whose last instruction spans two pages
  // Such an instruction run again in a block of its own right after: one execution (a rep-string
  // instruction's further iterations there count in rep_repeats).
  uint64_t page_reruns = 0;
  uint64_t lost_words = 0;      // execution words the plugin could not write (OVF in the trace)
  uint64_t overflows = 0;       // OVF packets
  uint64_t tsc_begin = 0;
  uint64_t tsc_end = 0;
  uint64_t first_ip = 0;        // where the thread's trace begins
};

// The per-instruction facts of every translated block, decoded once.
class QemuBlockCache {
 public:
  struct Insn {
    uint64_t ip;
    uint8_t size;
    pt::BranchKind kind;
    uint64_t target;  // direct branches: where they go when taken
  };
  struct Block {
    std::vector<Insn> insns;
    // insns[0, straight_end) only fall through: no packet can be due for them (a block ends at
    // its first branch, so usually straight_end == insns.size() - 1).
    size_t straight_end = 0;
    // The last instruction spans two pages: QEMU 7.2's inline per-instruction counter never
    // counts it (docs/record.md, "Cross-checks").
    bool last_crosses_page = false;
    bool done = false;
  };
  // The stream may still grow (blocks defined later): the cache looks blocks up by id each time.
  explicit QemuBlockCache(const QemuStream& stream) : stream_(stream) {}
  // Fails for an id the stream never defined or code Zydis cannot decode.
  Result<const Block*> Get(uint32_t id) {
    if (id < blocks_.size() && blocks_[id].done) return &blocks_[id];
    return Decode(id);
  }

 private:
  Result<const Block*> Decode(uint32_t id);

  const QemuStream& stream_;
  std::vector<Block> blocks_;
};

// QemuThreadEncoder answers "what PT did this thread produce so far?" for one thread whose
// execution words arrive in pieces (Feed), as the plugin writes them. Words whose meaning depends
// on later words (the outcome of a branch a signal interrupted) wait for them; everything else is
// encoded at once, so memory stays bounded.
class QemuThreadEncoder {
 public:
  QemuThreadEncoder(const QemuStream& stream, QemuBlockCache& cache, const QemuFlowOptions& options,
                    uint32_t tid, uint64_t tsc_begin);
  ~QemuThreadEncoder();
  QemuThreadEncoder(const QemuThreadEncoder&) = delete;
  QemuThreadEncoder& operator=(const QemuThreadEncoder&) = delete;

  // More of the thread's words, in order.
  Status Feed(const uint32_t* words, size_t count);
  // An event the recorder observed outside the stream (a signal's delivery, CLOCK_MONOTONIC
  // time): fed to the trigger engine once the thread's stream reaches that host time.
  void AddTriggerEvent(const triggers::TriggerEvent& event);
  // The threads this one created (clone returned their tid) since the last call, with the time of
  // the clone: a thread starts at its creator's time.
  std::vector<std::pair<uint32_t, uint64_t>> TakeClones();
  // No more words: encodes the rest and returns the thread's trace.
  Result<QemuThreadTrace> Finish();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Encodes one thread whose words are all known, starting at time `tsc_begin`.
Result<QemuThreadTrace> EncodeQemuThread(const QemuStream& stream, const QemuThread& thread,
                                         QemuBlockCache& cache, const QemuFlowOptions& options,
                                         uint64_t tsc_begin);

}  // namespace ptprof::record
