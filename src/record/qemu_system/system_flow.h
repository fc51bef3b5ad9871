#pragma once
// EncodeVcpu answers "what Intel PT trace would one CPU tracing kernel and user mode (OS=1 USR=1)
// have written?" from the blocks one QEMU vCPU executed (the system plugin's exec words): it
// expands the blocks into instructions, classifies them (syscall, sysret, iret and int are far
// transfers: a TIP, no PGD/PGE), and recognises interrupts and exceptions as asynchronous
// transfers (FUP + TIP): a block starting at an interrupt or exception entry of the kernel
// (KernelFacts) after anything but a branch there. A fault interrupts the block it happened in:
// the faulting instruction is where execution resumes after the handler's iret, and the block's
// instructions from there on did not run (QEMU announces a block before it runs). Along the way it
// follows each syscall from entry_SYSCALL_64 through its __x64_sys_* handler back to user mode,
// counts cli/sti/pushf/popf as a decoder would see them, and cuts snapshots (ring buffer) when a
// chosen syscall returns.
#include <cstdint>
#include <string>
#include <vector>

#include "decoders/pt/trace_encoder.h"
#include "src/model/result.h"
#include "src/record/qemu_flow.h"
#include "src/record/qemu_stream.h"
#include "src/record/qemu_system/kernel_facts.h"

namespace ptprof::record {

struct SystemFlowOptions {
  pt::EncoderOptions encoder;
  uint32_t cycles_per_insn = 1;
  bool keep_ips = false;                   // also return every instruction address
  uint64_t buffer_size = 0;                // snapshot mode: the ring per vCPU (0: whole trace)
  std::vector<std::string> snapshot_syscalls;  // handler names ("getpid") that cut a snapshot
  // The trigger engine (src/record/triggers) of --snapshot-on, or null. Each syscall is fed when
  // it returns to user mode: an entry at its entry time and an exit now, the vCPU as the thread,
  // in the guest's emulated time (TSC * 1e9 / tsc_hz), so a latency snapshot ends at the first
  // user instruction after the slow syscall. addr= fires after a block whose instructions cover
  // the (resolved) address ran; every= sees the guest's clock as ticks every 1/64 period.
  triggers::TriggerEngine* triggers = nullptr;
  uint64_t tsc_hz = 2000000000;  // the encoder's clock: CBR 20 x 100 MHz, TSC = core clock
  // The trace ends when a syscall reaches this handler; empty: at the end of the stream (the
  // plugin stops when the guest's shell runs again after the workload exited).
  std::string end_at_handler;
  // Where execution went after the last recorded block (the plugin stopped there), or 0.
  uint64_t final_next = 0;
};

// One syscall as the flow shows it: from the entry to the first user instruction after it.
struct SyscallSpan {
  std::string handler;       // "getpid" (from __x64_sys_getpid), "" when none was reached
  uint64_t user_ip = 0;      // the syscall instruction
  uint64_t insns = 0;        // kernel instructions from entry_SYSCALL_64 to the return (incl.)
  uint64_t tsc = 0;          // when it entered
};

// The counted privileged opcodes, by address half.
struct OpcodeCounts {
  uint64_t cli[2] = {}, sti[2] = {}, pushf[2] = {}, popf[2] = {};  // [0] user, [1] kernel
};

struct VcpuTrace {
  uint32_t vcpu = 0;
  std::vector<uint8_t> pt;                 // the whole trace (empty in snapshot mode)
  std::vector<QemuSnapshot> snapshots;     // snapshot mode
  pt::EncoderStats stats;
  std::vector<uint64_t> ips;               // with keep_ips
  uint64_t insns = 0, kernel_insns = 0;
  uint64_t rep_repeats = 0;
  uint64_t interrupts = 0, faults = 0;     // asynchronous transfers by kind
  uint64_t unresolved = 0;                 // async transfers whose resume point was not found
  std::vector<std::string> unresolved_at;  // the first few: "LAST_IP KIND -> HANDLER"
  std::vector<SyscallSpan> syscalls;
  OpcodeCounts counts;
  uint64_t tsc_end = 0;
};

Result<VcpuTrace> EncodeVcpu(const QemuStream& stream, const QemuThread& vcpu,
                             const KernelFacts& facts, const SystemFlowOptions& options);

}  // namespace ptprof::record
