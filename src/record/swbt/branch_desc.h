#pragma once
// BranchDesc answers "what does this control transfer do, in terms a signal handler can evaluate
// against a register context?": the machine-independent branch description of Break Dancing
// (section 2.1). DescribeInstruction builds it once per address (the decode cache keeps it);
// EvaluateBranch evaluates it against the registers and memory of the moment the breakpoint on
// the branch was hit (before the branch executed). Neither allocates: both run in signal handlers.
#include <cstddef>
#include <cstdint>

#include <Zydis/Zydis.h>

namespace ptprof::swbt {

// Registers in x86 encoding order (rax, rcx, rdx, rbx, rsp, rbp, rsi, rdi, r8..r15), then rip.
inline constexpr int kRsp = 4;
inline constexpr int kRip = 16;
inline constexpr int kNoReg = -1;

struct RegisterFile {
  uint64_t gpr[17] = {};  // [kRip] = rip
  uint64_t rflags = 0;
};

// Reads `size` bytes of the traced process at `address` into `out`; returns the bytes read (fewer
// when the memory is not mapped). Must be async-signal-safe.
using ReadMemoryFn = size_t (*)(void* context, uint64_t address, void* out, size_t size);

enum class BranchKind : uint8_t {
  kNone,          // not a control transfer
  kDirectJump,    // jmp rel: statically resolved, always taken
  kDirectCall,    // call rel: statically resolved, always taken
  kCondJump,      // jcc / jrcxz / loop: the target is static, taken-ness needs the flags
  kIndirectJump,  // jmp reg/mem
  kIndirectCall,  // call reg/mem
  kReturn,        // ret [imm16]: the target is on the stack
  kSyscall,       // syscall, sysenter, int n, int3, into: ends a burst
  kUnsupported,   // far transfers, iret, sysret, ud2, hlt, xbegin, segment or 32-bit addresses
};

enum class Condition : uint8_t {
  kNone, kO, kNO, kB, kNB, kZ, kNZ, kBE, kNBE, kS, kNS, kP, kNP, kL, kNL, kLE, kNLE,
  kCxz, kEcxz, kRcxz, kLoop, kLoopE, kLoopNE,
};

struct BranchDesc {
  uint64_t address = 0;
  uint8_t length = 0;
  BranchKind kind = BranchKind::kNone;
  Condition condition = Condition::kNone;
  bool count_32bit = false;  // loop/jcxz with a 0x67 prefix count in ecx
  uint64_t target = 0;       // direct and conditional branches
  // Indirect target: a register (mem == false) or the 8 bytes at base + index*scale + disp.
  bool mem = false;
  int8_t base = kNoReg;
  int8_t index = kNoReg;
  uint8_t scale = 0;
  int64_t disp = 0;          // (ret imm16: the bytes it pops besides the return address)

  uint64_t NextIp() const { return address + length; }
  // Statically resolved: always taken to a known target (Break Dancing's "s" branches).
  bool IsStatic() const { return kind == BranchKind::kDirectJump || kind == BranchKind::kDirectCall; }
  bool IsBranch() const { return kind != BranchKind::kNone && kind != BranchKind::kSyscall &&
                                 kind != BranchKind::kUnsupported; }
};

// Describes the decoded instruction at `address`.
BranchDesc DescribeInstruction(const ZydisDecodedInstruction& insn,
                               const ZydisDecodedOperand* operands, uint64_t address);

// How a decoded non-branch instruction moves the stack pointer: `known` is false when it writes
// rsp in a way the tracer does not follow (mov rsp, leave, pop rsp, ...).
struct StackEffect {
  bool known = true;
  int64_t delta = 0;
};
StackEffect StackEffectOf(const ZydisDecodedInstruction& insn, const ZydisDecodedOperand* operands);

struct BranchOutcome {
  bool ok = false;      // false: the target could not be read (bad_target)
  bool taken = false;
  uint64_t next = 0;    // the next instruction: the target when taken, else the fall-through
};

// Evaluates `branch` against the registers at the moment it is about to execute.
BranchOutcome EvaluateBranch(const BranchDesc& branch, const RegisterFile& regs,
                             ReadMemoryFn read, void* read_context);

// Maps a Zydis 64-bit general-purpose register (or rip) to a RegisterFile index; kNoReg for
// anything else.
int RegisterIndex(ZydisRegister reg);

}  // namespace ptprof::swbt
