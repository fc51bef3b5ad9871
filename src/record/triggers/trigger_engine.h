#pragma once
// TriggerEngine answers "does this event cut a snapshot, and when?" for every recording backend.
// Backends turn what they observe into TriggerEvents (syscall entry/exit from the raw_syscalls
// tracepoints or an emulator's callbacks, a breakpoint hit, a signal, a clock tick, an instruction
// count) with a time in nanoseconds of one clock of their choosing, and cut a snapshot of their
// ring for each SnapshotDecision, once the decision's `cut_ns` is reached (the trigger time plus
// --post). The engine pairs syscall entries and exits per thread for latency triggers, applies
// --min-interval and --max-snapshots, and says which trigger fired, when, for which thread.
//
// Interface for a backend (docs/recording.md, "Triggers for backend authors"):
//   TriggerEngine engine(policy);
//   for each observed event e:  if (auto d = engine.OnEvent(e)) { schedule a cut at d->cut_ns }
//   stop early once engine.Exhausted().
// The engine is not thread-safe: feed it from one thread, in time order.
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "src/record/triggers/trigger_spec.h"

namespace ptprof::record::triggers {

struct TriggerEvent {
  enum class Kind { kSyscallEnter, kSyscallExit, kBreakpoint, kSignal, kTick, kInsns };
  Kind kind = Kind::kTick;
  uint32_t tid = 0;
  uint64_t time_ns = 0;
  uint64_t syscall = 0;  // kSyscallEnter/kSyscallExit: the number (on exit, may be unknown: ~0)
  uint64_t address = 0;  // kBreakpoint
  int signal = 0;        // kSignal
  uint64_t insns = 0;    // kInsns: instructions of the thread so far
};

struct SnapshotDecision {
  size_t trigger = 0;      // index into SnapshotPolicy::triggers
  std::string label;       // the trigger's text, e.g. "syscall-latency>1ms:nanosleep"
  uint32_t tid = 0;        // the thread the event belongs to
  uint64_t time_ns = 0;    // when the trigger fired (the event's time)
  uint64_t cut_ns = 0;     // when to cut: time_ns + --post
  uint64_t syscall = 0;    // the syscall of syscall triggers
  uint64_t latency_ns = 0; // syscall-latency: how long the syscall took
  uint64_t sequence = 0;   // 0, 1, 2, ... over the recording
};

class TriggerEngine {
 public:
  explicit TriggerEngine(SnapshotPolicy policy);

  // The decision this event causes, if any.
  std::optional<SnapshotDecision> OnEvent(const TriggerEvent& event);
  // --max-snapshots reached: no more decisions will come.
  bool Exhausted() const;

  const SnapshotPolicy& policy() const { return policy_; }
  // The backend resolved addr=SYMBOL of trigger `trigger` to `address`.
  void ResolveAddress(size_t trigger, uint64_t address) { policy_.triggers.at(trigger).address = address; }
  uint64_t fired() const { return fired_; }
  // Triggers that matched but were dropped by --min-interval or --max-snapshots.
  uint64_t suppressed() const { return suppressed_; }
  // What backends must observe: syscall events, breakpoints, signals, ticks, instruction counts.
  bool WantsSyscalls() const;
  // The syscall numbers every syscall trigger is limited to, sorted, or empty when one of them
  // takes any syscall: what a kernel-side filter may keep without losing a match.
  std::vector<uint64_t> SyscallsWatched() const;
  std::vector<uint64_t> BreakpointAddresses() const;
  std::vector<int> Signals() const;
  uint64_t SmallestPeriodNs() const;  // 0: no every= trigger
  uint64_t SmallestInsnsPeriod() const;  // 0: no insns= trigger

 private:
  std::optional<SnapshotDecision> Match(const TriggerEvent& event, size_t* trigger,
                                        uint64_t* latency);
  std::optional<SnapshotDecision> Admit(const TriggerEvent& event, size_t trigger,
                                        uint64_t latency);

  SnapshotPolicy policy_;
  struct Pending { uint64_t syscall; uint64_t enter_ns; };
  std::unordered_map<uint32_t, Pending> in_syscall_;  // per thread, for latency
  std::vector<uint64_t> next_tick_;   // per every= trigger: when it fires next (0: not started)
  std::unordered_map<uint64_t, uint64_t> insns_due_;  // (trigger << 32 | tid) -> next count
  bool have_cut_ = false;
  uint64_t last_cut_ns_ = 0;
  uint64_t fired_ = 0;
  uint64_t suppressed_ = 0;
};

}  // namespace ptprof::record::triggers
