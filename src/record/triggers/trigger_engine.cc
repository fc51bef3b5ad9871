#include "src/record/triggers/trigger_engine.h"

#include <algorithm>

namespace ptprof::record::triggers {

namespace {
bool Listed(const std::vector<uint64_t>& syscalls, uint64_t number) {
  return syscalls.empty() || std::find(syscalls.begin(), syscalls.end(), number) != syscalls.end();
}
}  // namespace

TriggerEngine::TriggerEngine(SnapshotPolicy policy)
    : policy_(std::move(policy)), next_tick_(policy_.triggers.size(), 0) {}

bool TriggerEngine::Exhausted() const {
  return policy_.max_snapshots != 0 && fired_ >= policy_.max_snapshots;
}

bool TriggerEngine::WantsSyscalls() const {
  for (const auto& t : policy_.triggers)
    if (t.kind == TriggerKind::kSyscall || t.kind == TriggerKind::kSyscallLatency) return true;
  return false;
}

std::vector<uint64_t> TriggerEngine::SyscallsWatched() const {
  std::vector<uint64_t> out;
  for (const auto& t : policy_.triggers) {
    if (t.kind != TriggerKind::kSyscall && t.kind != TriggerKind::kSyscallLatency) continue;
    if (t.syscalls.empty()) return {};
    out.insert(out.end(), t.syscalls.begin(), t.syscalls.end());
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<uint64_t> TriggerEngine::BreakpointAddresses() const {
  std::vector<uint64_t> out;
  for (const auto& t : policy_.triggers)
    if (t.kind == TriggerKind::kAddress && t.address != 0) out.push_back(t.address);
  return out;
}

std::vector<int> TriggerEngine::Signals() const {
  std::vector<int> out;
  for (const auto& t : policy_.triggers)
    if (t.kind == TriggerKind::kSignal) out.push_back(t.signal);
  return out;
}

uint64_t TriggerEngine::SmallestPeriodNs() const {
  uint64_t out = 0;
  for (const auto& t : policy_.triggers)
    if (t.kind == TriggerKind::kEvery && (out == 0 || t.period_ns < out)) out = t.period_ns;
  return out;
}

uint64_t TriggerEngine::SmallestInsnsPeriod() const {
  uint64_t out = 0;
  for (const auto& t : policy_.triggers)
    if (t.kind == TriggerKind::kInsns && (out == 0 || t.insns < out)) out = t.insns;
  return out;
}

std::optional<SnapshotDecision> TriggerEngine::Match(const TriggerEvent& e, size_t* trigger,
                                                     uint64_t* latency) {
  using K = TriggerEvent::Kind;
  std::optional<Pending> entered;
  if (e.kind == K::kSyscallEnter) {
    in_syscall_[e.tid] = Pending{e.syscall, e.time_ns};
  } else if (e.kind == K::kSyscallExit) {
    if (auto it = in_syscall_.find(e.tid); it != in_syscall_.end()) {
      entered = it->second;
      in_syscall_.erase(it);
    }
  }
  for (size_t i = 0; i < policy_.triggers.size(); ++i) {
    const TriggerSpec& t = policy_.triggers[i];
    bool hit = false;
    switch (t.kind) {
      case TriggerKind::kSyscall:
        hit = e.kind == K::kSyscallEnter && Listed(t.syscalls, e.syscall);
        break;
      case TriggerKind::kSyscallLatency:
        // An exit whose entry was seen (a syscall in progress when recording began has none).
        if (e.kind == K::kSyscallExit && entered && Listed(t.syscalls, entered->syscall) &&
            e.time_ns >= entered->enter_ns && e.time_ns - entered->enter_ns > t.latency_ns) {
          hit = true;
          *latency = e.time_ns - entered->enter_ns;
        }
        break;
      case TriggerKind::kAddress:
        // A symbol the backend did not resolve matches any of its breakpoints.
        hit = e.kind == K::kBreakpoint && (t.address != 0 ? e.address == t.address : !t.symbol.empty());
        break;
      case TriggerKind::kSignal:
        hit = e.kind == K::kSignal && e.signal == t.signal;
        break;
      case TriggerKind::kEvery:
        if (e.kind == K::kTick) {
          if (next_tick_[i] == 0) next_tick_[i] = e.time_ns + t.period_ns;
          if (e.time_ns >= next_tick_[i]) {
            hit = true;
            // Missed periods are not made up: the next one is a period after this tick.
            next_tick_[i] = e.time_ns + t.period_ns;
          }
        }
        break;
      case TriggerKind::kInsns:
        if (e.kind == K::kInsns) {
          uint64_t& due = insns_due_[(static_cast<uint64_t>(i) << 32) | e.tid];
          if (due == 0) due = t.insns;
          if (e.insns >= due) {
            hit = true;
            due = (e.insns / t.insns + 1) * t.insns;
          }
        }
        break;
    }
    if (hit) {
      *trigger = i;
      return SnapshotDecision{};
    }
  }
  return std::nullopt;
}

std::optional<SnapshotDecision> TriggerEngine::OnEvent(const TriggerEvent& event) {
  size_t trigger = 0;
  uint64_t latency = 0;
  if (!Match(event, &trigger, &latency)) return std::nullopt;
  return Admit(event, trigger, latency);
}

std::optional<SnapshotDecision> TriggerEngine::Admit(const TriggerEvent& event, size_t trigger,
                                                     uint64_t latency) {
  if (Exhausted() ||
      (have_cut_ && policy_.min_interval_ns != 0 && event.time_ns >= last_cut_ns_ &&
       event.time_ns - last_cut_ns_ < policy_.min_interval_ns)) {
    ++suppressed_;
    return std::nullopt;
  }
  SnapshotDecision d;
  d.trigger = trigger;
  d.label = policy_.triggers[trigger].text;
  d.tid = event.tid;
  d.time_ns = event.time_ns;
  d.cut_ns = event.time_ns + policy_.post_ns;
  d.syscall = event.syscall;
  d.latency_ns = latency;
  d.sequence = fired_++;
  have_cut_ = true;
  last_cut_ns_ = event.time_ns;
  return d;
}

}  // namespace ptprof::record::triggers
