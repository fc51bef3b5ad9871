#pragma once
// TriggerSpec answers "when should a recording cut a snapshot?" for one `--snapshot-on` text, and
// SnapshotPolicy holds all of them plus the limits every backend applies (`--pre`, `--post`,
// `--max-snapshots`, `--min-interval`). The grammar (docs/recording.md, "Triggers"):
//
//   syscall=NAME[,NAME]                          at the entry of one of these syscalls
//   syscall-latency>DURATION[:NAME[,NAME]]       at the exit of a syscall that took longer
//   addr=SYMBOL|0xADDR                           when execution reaches an address
//   signal=USR2                                  when the recorded process gets this signal
//   every=DURATION                               periodically
//   insns=N                                      every N instructions (emulated backends only)
//
// DURATION is a number with a unit: ns, us, ms, s (`200us`, `1ms`, `1.5s`). SIZE is a number of
// bytes with an optional K, M, G (powers of two: `64K`, `4M`). Errors name the column.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "src/model/result.h"

namespace ptprof::record::triggers {

enum class TriggerKind { kSyscall, kSyscallLatency, kAddress, kSignal, kEvery, kInsns };

struct TriggerSpec {
  TriggerKind kind = TriggerKind::kSyscall;
  std::string text;                // as the user wrote it: the label of the snapshots it cuts
  std::vector<uint64_t> syscalls;  // kSyscall, kSyscallLatency (empty: any syscall)
  uint64_t latency_ns = 0;         // kSyscallLatency: fires when exit - entry > latency_ns
  std::string symbol;              // kAddress by name (resolved by the backend), or empty
  uint64_t address = 0;            // kAddress by number
  int signal = 0;                  // kSignal: the signal number
  uint64_t period_ns = 0;          // kEvery
  uint64_t insns = 0;              // kInsns
};

struct SnapshotPolicy {
  std::vector<TriggerSpec> triggers;
  uint64_t pre_bytes = 0;        // --pre: how much trace before the trigger to keep (0: default)
  uint64_t post_ns = 0;          // --post: keep tracing this long after the trigger, then cut
  uint64_t max_snapshots = 0;    // --max-snapshots (0: no limit)
  uint64_t min_interval_ns = 0;  // --min-interval: triggers closer than this to the last cut are dropped
};

// One `--snapshot-on` text; errors read "--snapshot-on 'TEXT': column N: what is wrong".
Result<TriggerSpec> ParseTrigger(std::string_view text);
// "5ms" -> 5000000; `what` names the option in errors.
Result<uint64_t> ParseDuration(std::string_view text, std::string_view what);
// "64K" -> 65536.
Result<uint64_t> ParseSize(std::string_view text, std::string_view what);
// A duration as the shortest exact text ("1ms", "250us", "1500ns").
std::string FormatDuration(uint64_t ns);

}  // namespace ptprof::record::triggers
