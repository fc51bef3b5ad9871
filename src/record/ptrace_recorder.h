#pragma once
// RecordWithPtrace answers "what PT trace would this program have produced with user-only
// tracing?" for small programs: it single-steps the program (PtraceStepper), classifies each
// instruction (X86Decoder) and encodes the flow into genuine PT packets (TraceEncoder). It is the
// generator of ptprof's sample traces and an exact oracle for faster recorders.
#include <cstdint>
#include <vector>

#include "decoders/pt/trace_encoder.h"
#include "src/record/ptrace_stepper.h"

namespace ptprof::record {

struct PtraceRecording {
  std::vector<uint8_t> trace;          // the PT packet stream
  std::vector<uint64_t> executed_ips;  // every executed instruction, as a PT decoder reports them
  pt::EncoderStats stats;
  StepperResult run;
};

Result<PtraceRecording> RecordWithPtrace(const StepperOptions& stepper,
                                         const pt::EncoderOptions& encoder);

}  // namespace ptprof::record
