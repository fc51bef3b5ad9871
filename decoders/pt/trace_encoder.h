#pragma once
// TraceEncoder answers "what Intel PT packets would the hardware have written for this executed
// instruction stream?". A recorder that observes execution (ptrace single-stepping, a QEMU plugin)
// feeds it every executed instruction with where execution went next; it emits a genuine PT packet
// stream through libipt's encoder: TNT bits for conditional branches and compressed returns, TIP for
// indirect transfers, TIP.PGD/TIP.PGE around syscalls (user-only tracing), FUP+TIP for asynchronous
// transfers (signals), and a PSB+ every `psb_period` bytes. The result decodes with any PT decoder.
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
};

struct EncoderStats {
  uint64_t insns = 0;
  uint64_t packets = 0;
  uint64_t psbs = 0;
  uint64_t tnt_bits = 0;
  uint64_t tips = 0;
  uint64_t async_branches = 0;
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
  // Tracing stops before the next instruction (the program exited or the recording ends).
  Status End();

  const std::vector<uint8_t>& bytes() const { return out_; }
  const EncoderStats& stats() const { return stats_; }

 private:
  struct Impl;
  Status EmitPsbPlus(uint64_t ip, uint64_t tsc);
  Status FlushTnt();
  Status AddTntBit(bool taken);
  Status EmitIp(int type, uint64_t ip, bool suppressed);
  Status Emit(const void* packet);
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
  // Mirror of the decoder's return stack: a ring of 64 like the hardware's and libipt's.
  uint64_t ret_stack_[64] = {};
  uint8_t ret_top_ = 0;
  uint8_t ret_depth_ = 0;
};

}  // namespace ptprof::pt
