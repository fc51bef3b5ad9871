#pragma once
// InsnDecoder answers "what is the instruction at this address, as a pattern sees it?": it
// disassembles x86 (through sideband's Zydis-based X86Decoder) and AArch64/A32/T32 (capstone)
// into an InsnText. It holds the disassemblers; callers cache its answers per address
// (InsnCache).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

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

  // The length and mnemonic (static storage) of an x86 instruction without formatting its
  // operands, several times cheaper than Decode; nullopt for Arm modes and undecodable bytes.
  struct Quick {
    uint8_t length;
    const char* mnemonic;
  };
  std::optional<Quick> QuickX86(const uint8_t* bytes, size_t size, ExecMode mode) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ptprof::patterns
