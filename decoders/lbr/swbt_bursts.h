#pragma once
// The software branch tracer's burst file (docs/formats/swbt.md) answers "which taken branches did
// the tracer see, in which thread, and why did each burst end?". libptprof-swbt.so writes one file
// per traced process image; `ptprof record --backend swbt` stores each as an archive member. This
// header fixes the on-disk layout (shared with the writer in src/record/swbt/) and declares the
// reader that turns a file into BranchSamples.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "decoders/lbr/branch_record.h"
#include "src/model/result.h"

namespace ptprof {

// ---- On-disk layout (little-endian; see docs/formats/swbt.md) -----------------------------------

// File header: 32 bytes.
//   0  char[8]  magic "PTSWBT\0\1"
//   8  u32      version (1)
//  12  u32      pid of the traced process image
//  16  u32      lbr_depth the tracer was asked for
//  20  u32      reserved (0)
//  24  u64      sample period in nanoseconds (task-clock)
inline constexpr char kSwbtMagic[8] = {'P', 'T', 'S', 'W', 'B', 'T', '\0', '\1'};
inline constexpr uint32_t kSwbtVersion = 1;
inline constexpr size_t kSwbtFileHeaderSize = 32;

// Burst record: a 32-byte header, then `count` branches of 16 bytes {u64 from, u64 to}, oldest
// first.
//   0  u32  record magic "BRST" (0x54535242)
//   4  u16  count: taken branches that follow (0..lbr_depth)
//   6  u16  end reason (SwbtEndReason)
//   8  u32  tid
//  12  u32  reserved (0)
//  16  u64  time_ns: CLOCK_MONOTONIC when the sample that started the burst arrived
//  24  u64  start_pc: the interrupted address the burst was traced from
inline constexpr uint32_t kSwbtBurstMagic = 0x54535242;
inline constexpr size_t kSwbtBurstHeaderSize = 32;
inline constexpr size_t kSwbtBranchSize = 16;
inline constexpr uint32_t kSwbtMaxDepth = 1024;

// Why a burst ended. kComplete: it holds lbr_depth taken branches; every other reason ended it
// early (its branches so far are still consecutive taken branches of the thread).
enum class SwbtEndReason : uint16_t {
  kComplete = 0,
  kSyscall = 1,          // the path reached syscall/sysenter/int
  kUnsupported = 2,      // a far transfer, iret, hlt, ud2, a segment-relative target ...
  kDecodeFailure = 3,    // code bytes that do not decode or cannot be read
  kUnexpectedFrame = 4,  // a breakpoint signal arrived at another address (a delayed or foreign signal)
  kStackMismatch = 5,    // the breakpoint was hit with another stack pointer (e.g. in a signal handler)
  kRseq = 6,             // the next breakpoint would lie in an rseq critical section
  kThreadExit = 7,       // the thread or the process ended during the burst
  kBreakpointFailed = 8, // the breakpoint could not be placed (ioctl failed, or in the tracer itself)
  kStalled = 9,          // a whole sampling period passed without reaching the breakpoint
  kBadTarget = 10,       // an indirect target or return address could not be read
  kCount = 11,
};
inline const char* SwbtEndReasonName(SwbtEndReason reason) {
  constexpr const char* kNames[] = {"complete", "syscall", "unsupported", "decode_failure",
                                    "unexpected_frame", "stack_mismatch", "rseq", "thread_exit",
                                    "breakpoint_failed", "stalled", "bad_target"};
  const auto index = static_cast<uint16_t>(reason);
  return index < static_cast<uint16_t>(SwbtEndReason::kCount) ? kNames[index] : "unknown";
}

// ---- How an archive made by `ptprof record --backend swbt` is recognised ---------------------
// manifest.source.kind == kSwbtSourceKind; each burst file is a sideband entry of kind
// kSwbtBurstsKind whose member is "bursts/pid<PID>[.<N>].swbt"; the process mappings are sideband
// entries of kind kSwbtMapsKind ("sideband/maps.pid<PID>.<start|exit>.txt"), the tracer's counters
// one entry of kind kSwbtCountersKind ("sideband/swbt_counters.json"). ELF files are images.
inline constexpr const char* kSwbtSourceKind = "swbt";
inline constexpr const char* kSwbtBurstsKind = "swbt_bursts";
inline constexpr const char* kSwbtMapsKind = "proc_maps";
inline constexpr const char* kSwbtCountersKind = "swbt_counters";

// ---- Reader ------------------------------------------------------------------------------------

struct SwbtFileHeader {
  uint32_t version = 0;
  uint32_t pid = 0;
  uint32_t lbr_depth = 0;
  uint64_t sample_period_ns = 0;
};

// One burst as stored: the branch sample (pid from the file header, cpu -1, trace_offset = the
// byte offset of the burst record) plus what only the tracer knows.
struct SwbtBurst {
  BranchSample sample;
  SwbtEndReason reason = SwbtEndReason::kComplete;
  uint64_t start_pc = 0;
};

// Calls `visit` for every burst in order (sample = 0, 1, ...). A truncated last record (the
// process was killed mid-write) ends the file silently; any other damage fails with the file name
// and the byte offset.
Result<SwbtFileHeader> ForEachSwbtBurst(std::span<const uint8_t> bytes, const std::string& name,
                                        const std::function<void(const SwbtBurst&)>& visit);

// Every burst that holds at least one branch, complete or ended early, as BranchSamples.
Result<std::vector<BranchSample>> ReadSwbtBursts(std::span<const uint8_t> bytes,
                                                 const std::string& name);

}  // namespace ptprof
