#include "src/analyses/crossval/fallthrough_path.h"

#include <fmt/format.h>

namespace ptprof {

FallThroughVerdict CheckFallThrough(const ImageSet& code, const X86Decoder& x86, uint64_t to,
                                    uint64_t next_from, uint32_t max_insns) {
  if (next_from < to) return {false, fmt::format("the next branch {:#x} lies before {:#x}", next_from, to)};
  uint64_t ip = to;
  for (uint32_t n = 0; n < max_insns; ++n) {
    if (ip == next_from) return {true, ""};
    if (ip > next_from) return {false, fmt::format("instructions step over {:#x}", next_from)};
    uint8_t bytes[15];
    const size_t got = code.Read(ip, bytes, sizeof bytes);
    if (got == 0) return {false, fmt::format("no code at {:#x}", ip)};
    auto insn = x86.Decode(bytes, got, ExecMode::k64Bit);
    if (!insn) return {false, fmt::format("undecodable code at {:#x}", ip)};
    if (insn->kind != X86Kind::kOther && insn->kind != X86Kind::kCondJump)
      return {false, fmt::format("{} at {:#x} transfers before {:#x}", insn->mnemonic, ip, next_from)};
    ip += insn->length;
  }
  return {false, fmt::format("more than {} instructions from {:#x} to {:#x}", max_insns, to, next_from)};
}

}  // namespace ptprof
