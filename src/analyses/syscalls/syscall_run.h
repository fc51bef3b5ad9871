// RunSyscalls answers "what syscalls are in this session?": it decodes the selected streams of a
// session into a CallStackBuilder with a SyscallTracker watching it and returns every syscall
// instance with the stack repairs and the time base. Shared by `ptprof syscalls` and
// `ptprof impact`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "src/analyses/support/call_stack.h"
#include "src/analyses/syscalls/syscall_tracker.h"
#include "src/model/result.h"
#include "src/pipeline/decode_streams.h"
#include "src/pipeline/session.h"

namespace ptprof::syscalls {

struct SyscallRun {
  std::vector<SyscallInstance> instances;  // in order of return
  SyscallCounts counts;
  RepairCounts repairs;
  uint64_t blocks = 0;
  uint64_t instructions = 0;
  bool timed = false;           // the trace has a time base: latencies are meaningful
  CallTree tree;                // the whole flow's call tree, every thread merged
  std::vector<std::string> warnings;  // streams that could not be decoded, one line each
  std::vector<std::string> decode_notes;  // how each stream was decoded (DescribeDecode)
};

// Decodes `selected` streams of `session` (`where` names the input in messages). A raw trace
// that cannot be decoded is an error; a stream of a multi-stream input is a warning.
// `decode`: how to decode them (the defaults; a caller may lend code graphs).
Result<SyscallRun> RunSyscalls(const Session& session, const std::vector<size_t>& selected,
                               const std::string& where, const DecodeStreamsOptions& decode = {});

// Opens `input` (OpenSession with `options`; `options_given` as the user gave them), selects the
// `streams` named (all when empty) and runs RunSyscalls. Session warnings go to run.warnings.
Result<SyscallRun> RunSyscallsOnInput(const std::string& input, const RawInputOptions& options,
                                      bool options_given, const std::vector<std::string>& streams);

}  // namespace ptprof::syscalls
