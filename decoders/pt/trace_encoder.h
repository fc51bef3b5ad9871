#pragma once
// TraceEncoder answers "what Intel PT packets would the hardware have written for this executed
// instruction stream?". A recorder that observes execution (ptrace single-stepping, a QEMU plugin)
// feeds it every executed instruction with where execution went next; it emits a genuine PT packet
// stream through libipt's encoder: TNT bits for conditional branches and compressed returns, TIP for
// indirect transfers, TIP.PGD/TIP.PGE around syscalls (user-only tracing), FUP+TIP for asynchronous
// transfers (signals), and a PSB+ every `psb_period` bytes. The result decodes with any PT decoder.
// Timing follows the times the caller gives: the core clock and the TSC run at the same rate (CBR ==
// the nominal ratio), the crystal clock (CTC) ticks once every `tsc_per_ctc` TSC ticks; PSB+ carries
// TSC, TMA and CBR, MTC packets mark every 2^mtc_freq CTC ticks, CYC packets carry the cycles since
// the previous CYC when at least 2^(cyc_threshold-1) have passed.
#include <cstdint>
#include <memory>
#include <vector>

#include "src/model/result.h"
#include "src/model/trace_event.h"

namespace ptprof::pt {

// What an instruction does to control flow, as far as packet generation cares.
enum class BranchKind : uint8_t {
  kNone,          // falls through (or faults: then the next instruction is an async target)
  kCondJump,
  kDirectJump,
  kDirectCall,
  kIndirectJump,
  kIndirectCall,
  kReturn,
  kSyscall,       // leaves user mode: tracing pauses until execution comes back
  kFarTransfer,   // other far transfers that stay traced (e.g. a far jump)
};

struct ExecutedInsn {
  uint64_t ip = 0;
  uint8_t size = 0;
  BranchKind kind = BranchKind::kNone;
  uint64_t next_ip = 0;  // where execution actually continued
  uint64_t target = 0;   // the encoded target of direct jumps and calls (0 when unknown)
};

struct EncoderOptions {
  uint64_t psb_period = 4096;     // bytes of packets between PSB+ groups
  bool return_compression = true;
  bool emit_tsc = true;            // a TSC packet in every PSB+
  bool tnt64 = false;              // up to 47 outcomes per TNT-64 packet (else TNT-8 with up to 6)
  bool emit_timing = false;        // CBR (and TMA with MTC) in PSB+; MTC and CYC when enabled
  bool emit_mtc = false;
  uint8_t mtc_freq = 3;            // an MTC every 2^mtc_freq CTC ticks (IA32_RTIT_CTL.MTCFreq)
  bool emit_cyc = false;
  uint8_t cyc_threshold = 0;       // IA32_RTIT_CTL.CycThresh: CYC when >= 2^(n-1) cycles (0: any)
  uint32_t tsc_per_ctc = 2;        // CPUID 0x15 EBX/EAX with EAX = 1
  uint8_t cbr = 20;                // core:bus ratio, equal to the nominal ratio
};

struct EncoderStats {
  uint64_t insns = 0;
  uint64_t packets = 0;
  uint64_t psbs = 0;
  uint64_t tnt_bits = 0;
  uint64_t tips = 0;
  uint64_t async_branches = 0;
  uint64_t mtcs = 0;
  uint64_t cycs = 0;
  uint64_t overflows = 0;
};

class TraceEncoder {
 public:
  explicit TraceEncoder(EncoderOptions options = {});
  ~TraceEncoder();
  TraceEncoder(const TraceEncoder&) = delete;
  TraceEncoder& operator=(const TraceEncoder&) = delete;

  // Tracing starts before the instruction at `ip` executes.
  Status Begin(uint64_t ip, ExecMode mode, uint64_t tsc);
  // `insn` executed; `tsc` is the time stamp when it did (used for PSB+ TSC and CYC packets).
  Status Step(const ExecutedInsn& insn, uint64_t tsc);
  // An asynchronous transfer (a signal) interrupted execution before the instruction at `from`
  // and continued at `to`: FUP(from) + TIP(to). Tracing must be enabled.
  Status AsyncBranch(uint64_t from, uint64_t to, uint64_t tsc);
  // Tracing stops before the next instruction (the program exited or the recording ends).
  Status End();
  // Packets were lost (the recorder could not keep up, as when the hardware's internal buffer
  // overflows): OVF, then, when tracing is enabled, FUP naming `resume_ip`, where execution goes
  // on; IP compression and the return stack start afresh. The instructions between the last Step
  // and `resume_ip` are unknown to the decoder (it reports a gap).
  Status Overflow(uint64_t resume_ip, uint64_t tsc);
  // Starts a new, independent stream (a snapshot): the bytes so far are handed over and the next
  // Step begins with PSB+ and TIP.PGE. The encoder keeps its options and statistics.
  std::vector<uint8_t> TakeBytes();
  // `n` instructions that only fall through ran since the last Step (no packet can be due for
  // them: the caller keeps Step for branches and block ends, where PSB+ and MTC are placed).
  void CountStraightLine(uint64_t n) { stats_.insns += n; }
  // Whether the next instruction must go through Step even if it only falls through: tracing
  // resumes there (TIP.PGE) or a PSB+ is due (its FUP names that instruction).
  bool NeedsStep() const {
    return !enabled_ || fresh_ || out_.size() - bytes_at_last_psb_ >= options_.psb_period;
  }
  // Forgets the oldest `n` bytes of output (a ring buffer that wrapped, as in snapshot mode).
  void DropPrefix(size_t n);

  const std::vector<uint8_t>& bytes() const { return out_; }
  const EncoderStats& stats() const { return stats_; }

 private:
  struct Impl;
  Status EmitPsbPlus(uint64_t ip, uint64_t tsc);
  Status FlushTnt();
  Status AddTntBit(bool taken);
  Status EmitIp(int type, uint64_t ip, bool suppressed);
  Status Emit(const void* packet);
  Status Tick(uint64_t tsc);    // MTC when a CTC period boundary passed
  Status MaybeCyc();            // CYC before a packet that carries timing
  void PushReturn(uint64_t ip);

  EncoderOptions options_;
  std::unique_ptr<Impl> impl_;
  std::vector<uint8_t> out_;
  EncoderStats stats_;
  ExecMode mode_ = ExecMode::k64Bit;
  bool enabled_ = false;
  uint64_t next_ip_ = 0;  // where execution goes after the last instruction seen
  bool have_last_ip_ = false;
  uint64_t last_ip_ = 0;
  uint64_t tnt_bits_ = 0;
  uint8_t tnt_count_ = 0;
  uint64_t bytes_at_last_psb_ = 0;
  uint64_t now_ = 0;             // the time (TSC) of the instruction being encoded
  uint64_t last_cyc_ = 0;        // the time of the last CYC (or PSB)
  uint64_t last_mtc_period_ = 0;
  bool fresh_ = false;           // after TakeBytes: the next Step starts a new stream
  // Mirror of the decoder's return stack: a ring of 64 like the hardware's and libipt's.
  uint64_t ret_stack_[64] = {};
  uint8_t ret_top_ = 0;
  uint8_t ret_depth_ = 0;
};

}  // namespace ptprof::pt
