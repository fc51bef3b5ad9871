#pragma once
// DecodeAhead answers "from this address, where is the next control transfer, what is it, and how
// far has the stack pointer moved by then?" (FindNextBranch of Break Dancing's algorithm 1). The
// answer for a start address is kept in a fixed-size, per-thread DecodeCache so that the signal
// handlers decode each run once. Nothing here allocates or locks: it runs in signal handlers.
#include <cstddef>
#include <cstdint>

#include <Zydis/Zydis.h>

#include "src/record/swbt/branch_desc.h"

namespace ptprof::swbt {

enum class RunEnd : uint8_t {
  kBranch,         // `branch` is the next control transfer (possibly a syscall/unsupported one)
  kDecodeFailure,  // bytes that cannot be read or decoded before any branch
  kTooLong,        // no branch within kMaxRunInsns instructions
};

inline constexpr uint32_t kMaxRunInsns = 4096;

// The straight-line run from `start` to the next control transfer.
struct Run {
  uint64_t start = 0;
  RunEnd end = RunEnd::kDecodeFailure;
  BranchDesc branch;
  bool rsp_known = true;  // rsp at the branch == rsp at start + rsp_delta
  int32_t rsp_delta = 0;
  uint32_t insns = 0;     // instructions decoded, the branch included
};

// Decodes from `start` with `decoder` (64-bit mode), reading code through `read`.
Run ScanRun(const ZydisDecoder& decoder, uint64_t start, ReadMemoryFn read, void* read_context);

// Runs by start address: a direct-mapped table (a colliding start replaces the older run).
class DecodeCache {
 public:
  static constexpr size_t kEntries = 4096;  // a power of two

  const Run* Find(uint64_t start) const {
    const Run& slot = runs_[Slot(start)];
    return slot.start == start && start != 0 ? &slot : nullptr;
  }
  const Run& Put(const Run& run) { return runs_[Slot(run.start)] = run; }
  void Clear() {
    for (Run& run : runs_) run.start = 0;
  }

 private:
  static size_t Slot(uint64_t start) { return (start ^ (start >> 12)) & (kEntries - 1); }
  Run runs_[kEntries];
};

}  // namespace ptprof::swbt
