#pragma once
// What a decoded x86 instruction means for PT packet generation when only user mode is traced:
// which branches the decoder can follow from the code alone (direct), which need a target packet
// (indirect), and which leave user mode so that tracing pauses (syscall, int n, far transfers).
#include "decoders/pt/trace_encoder.h"
#include "sideband/x86_insn.h"

namespace ptprof::record {

pt::BranchKind UserModeBranchKind(const X86Insn& insn);

}  // namespace ptprof::record
