#pragma once
// X86Decoder answers "what is the x86 instruction in these bytes?": its length, what it does to
// control flow (for the model's BlockEnd and for cross-checking a trace decoder's classification)
// and its direct branch target. It wraps Zydis so that nobody else includes it.
#include <cstdint>
#include <memory>
#include <string>

#include "src/model/result.h"
#include "src/model/trace_event.h"

namespace ptprof {

// Control-flow kind of one instruction, finer than BlockEnd so that a trace decoder's own
// classification (near/far, call gate, VM entry) can be checked against it.
enum class X86Kind : uint8_t {
  kOther,
  kCallNear,
  kCallFar,
  kRetNear,
  kRetFar,
  kJumpNear,
  kJumpFar,
  kCondJump,   // jcc, jcxz/jecxz/jrcxz, loop/loope/loopne
  kSyscall,    // syscall, sysenter
  kSysret,     // sysret, sysexit
  kInterrupt,  // int n, int1, int3, into
  kIret,       // iret, iretd, iretq
  kVmCall,     // vmcall, vmmcall
  kVmEntry,    // vmlaunch, vmresume
};

struct X86Insn {
  uint8_t length = 0;
  X86Kind kind = X86Kind::kOther;
  bool has_branch_disp = false;  // a relative branch: the target is ip + length + disp
  int64_t branch_disp = 0;
  const char* mnemonic = "";     // lower-case, e.g. "call" (static storage)

  // The address of the next instruction when the branch (if any) is taken: ip + length (+ disp).
  uint64_t NextIp(uint64_t ip) const {
    return ip + length + (has_branch_disp ? static_cast<uint64_t>(branch_disp) : 0);
  }
};

// What an X86Kind means for the model (conditional jumps are reported as kCondTaken; only the
// trace knows whether they were taken).
BlockEnd X86KindToBlockEnd(X86Kind kind);
const char* X86KindName(X86Kind kind);

class X86Decoder {
 public:
  X86Decoder();
  ~X86Decoder();
  X86Decoder(const X86Decoder&) = delete;
  X86Decoder& operator=(const X86Decoder&) = delete;

  // Decodes the instruction at the start of `bytes` in `mode` (k16Bit, k32Bit, k64Bit).
  // Fails for undecodable bytes and for non-x86 or unknown modes.
  Result<X86Insn> Decode(const uint8_t* bytes, size_t size, ExecMode mode) const;

  // Intel-syntax text in the style of XED (as libipt's ptxed prints it): lower-case hex without
  // padding, explicit memory operand sizes, absolute branch targets computed from `ip`; an
  // instruction without operands keeps XED's trailing blank ("syscall "). `att` selects AT&T
  // syntax instead.
  Result<std::string> Format(const uint8_t* bytes, size_t size, ExecMode mode, uint64_t ip,
                             bool att = false) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ptprof
