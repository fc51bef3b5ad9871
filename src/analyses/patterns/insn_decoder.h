#pragma once
// InsnDecoder answers "what is the instruction at this address, as a pattern sees it?": it
// disassembles x86 (through sideband's Zydis-based X86Decoder) and AArch64/A32/T32 (capstone)
// into an InsnText. It holds the disassemblers; callers cache its answers per address
// (InsnCache).
#include <cstddef>
#include <cstdint>
#include <memory>

#include "src/analyses/patterns/insn_text.h"
#include "src/model/result.h"
#include "src/model/trace_event.h"

namespace ptprof::patterns {

class InsnDecoder {
 public:
  InsnDecoder();
  ~InsnDecoder();
  InsnDecoder(const InsnDecoder&) = delete;
  InsnDecoder& operator=(const InsnDecoder&) = delete;

  // Decodes the instruction at the start of `bytes` (at most `size` of them), executed at `ip` in
  // `mode`. Fails for undecodable bytes and unknown modes.
  Result<InsnText> Decode(uint64_t ip, const uint8_t* bytes, size_t size, ExecMode mode) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ptprof::patterns
