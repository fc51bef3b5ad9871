#pragma once
// EncodeQemuThread answers "what PT trace would user-only Intel PT have written for this thread?"
// from the blocks QEMU executed: it expands each executed block into its instructions, classifies
// them (X86Decoder, once per translated block), works out where each went (the next executed
// block, a rep-string repetition, a signal) and feeds TraceEncoder. Time comes from a cycle model:
// `cycles_per_insn` core cycles per instruction, the TSC running at the core clock (emulated time,
// not the host's).
#include <cstdint>
#include <string>
#include <vector>

#include "decoders/pt/trace_encoder.h"
#include "src/model/result.h"
#include "src/record/qemu_stream.h"

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
};

struct QemuSnapshot {
  std::vector<uint8_t> pt;  // starts at a PSB
  std::string label;        // what triggered it: "syscall=1", "insns=1000000", "end"
  uint64_t tsc = 0;         // the time of the trigger
  uint64_t insns = 0;       // instructions of the thread before the trigger
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
  uint64_t tsc_begin = 0;
  uint64_t tsc_end = 0;
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
  explicit QemuBlockCache(const QemuStream& stream) : stream_(stream) {}
  // Fails for an id the stream never defined or code Zydis cannot decode.
  Result<const std::vector<Insn>*> Get(uint32_t id);

 private:
  const QemuStream& stream_;
  std::vector<std::vector<Insn>> insns_;
  std::vector<uint8_t> done_;
};

// Encodes one thread, starting at time `tsc_begin`.
Result<QemuThreadTrace> EncodeQemuThread(const QemuStream& stream, const QemuThread& thread,
                                         QemuBlockCache& cache, const QemuFlowOptions& options,
                                         uint64_t tsc_begin);

}  // namespace ptprof::record
