#include "src/record/ptrace_recorder.h"

#include <optional>

#include <x86intrin.h>

#include "src/record/branch_kind.h"
#include "sideband/x86_insn.h"

namespace ptprof::record {

namespace {
std::string Hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}
}  // namespace

Result<PtraceRecording> RecordWithPtrace(const StepperOptions& stepper,
                                         const pt::EncoderOptions& encoder_options) {
  PtraceRecording recording;
  pt::TraceEncoder encoder(encoder_options);
  X86Decoder decoder;
  std::optional<pt::ExecutedInsn> pending;  // executed, but where it went is not known yet
  bool started = false;

  auto on_insn = [&](uint64_t ip, const uint8_t* code, size_t size) -> Status {
    uint64_t tsc = __rdtsc();
    if (!started) {
      if (auto s = encoder.Begin(ip, ExecMode::k64Bit, tsc); !s) return s;
      started = true;
    }
    if (pending) {
      // A string instruction with a rep prefix traps once per iteration at the same address; a
      // PT decoder reports it once.
      if (pending->ip == ip && pending->kind == pt::BranchKind::kNone) return {};
      pending->next_ip = ip;
      if (auto s = encoder.Step(*pending, tsc); !s) return s;
    }
    auto insn = decoder.Decode(code, size, ExecMode::k64Bit);
    if (!insn) return Fail("ptrace recorder: undecodable instruction at " + Hex(ip) + ": " +
                           insn.error().message);
    pending = pt::ExecutedInsn{ip, insn->length, UserModeBranchKind(*insn), 0,
                               insn->has_branch_disp ? insn->NextIp(ip) : 0};
    recording.executed_ips.push_back(ip);
    return {};
  };

  auto run = RunSingleStepped(stepper, on_insn);
  if (!run) return tl::unexpected(run.error());
  recording.run = *run;
  if (pending && pending->kind == pt::BranchKind::kSyscall) {
    // The program ended in a system call (exit): tracing stops there.
    pending->next_ip = pending->ip + pending->size;
    if (auto s = encoder.Step(*pending, __rdtsc()); !s) return tl::unexpected(s.error());
  } else if (pending) {
    // Stopped mid-run: where the last instruction went is unknown, so it is not part of the trace.
    recording.executed_ips.pop_back();
  }
  if (started) {
    if (auto s = encoder.End(); !s) return tl::unexpected(s.error());
  }
  recording.trace = encoder.bytes();
  recording.stats = encoder.stats();
  return recording;
}

}  // namespace ptprof::record
