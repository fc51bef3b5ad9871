#pragma once
// FallThroughPath answers "could the code run from `to` to the branch at `next_from` without
// taking another branch?": the check that makes a recorded run of branches a feasible path in the
// control-flow graph even where the decoded flow never took it. It decodes forward from `to`
// through not-taken conditional branches and ordinary instructions until it reaches `next_from`.
#include <cstdint>
#include <string>

#include "sideband/image_set.h"
#include "sideband/x86_insn.h"

namespace ptprof {

struct FallThroughVerdict {
  bool feasible = false;
  std::string reason;  // why not: "unconditional jmp at 0x...", "no code at 0x...", ...
};

FallThroughVerdict CheckFallThrough(const ImageSet& code, const X86Decoder& x86, uint64_t to,
                                    uint64_t next_from, uint32_t max_insns = 4096);

}  // namespace ptprof
