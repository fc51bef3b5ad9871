#include "src/record/triggers/live_triggers.h"

#include <poll.h>

#include <algorithm>
#include <ctime>

namespace ptprof::record::triggers {

uint64_t MonotonicNowNs() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1000000000ull + static_cast<uint64_t>(now.tv_nsec);
}

Result<std::unique_ptr<LiveTriggers>> LiveTriggers::Open(pid_t pid, TriggerEngine& engine,
                                                         bool enable_on_exec) {
  std::unique_ptr<LiveTriggers> self(new LiveTriggers());
  self->engine_ = &engine;
  if (engine.WantsSyscalls()) {
    SyscallTracepoints::Options options;
    options.enable_on_exec = enable_on_exec;
    options.only_syscalls = engine.SyscallsWatched();
    auto opened = SyscallTracepoints::Open(pid, options);
    if (!opened) return tl::unexpected(opened.error());
    self->syscalls_ = std::move(*opened);
  }
  ProcessProbes::Options probes;
  probes.breakpoints = engine.BreakpointAddresses();
  probes.signals = !engine.Signals().empty();
  probes.enable_on_exec = enable_on_exec;
  for (const TriggerSpec& t : engine.policy().triggers)
    if (t.kind == TriggerKind::kAddress && t.address == 0)
      return Fail("--snapshot-on '" + t.text + "': the symbol was not found in the program");
  if (!probes.breakpoints.empty() || probes.signals) {
    auto opened = ProcessProbes::Open(pid, probes);
    if (!opened) return tl::unexpected(opened.error());
    self->probes_ = std::move(*opened);
  }
  self->ticks_ = engine.SmallestPeriodNs() != 0;
  return self;
}

Status LiveTriggers::Enable() {
  if (syscalls_)
    if (auto st = syscalls_->Enable(); !st) return st;
  if (probes_)
    if (auto st = probes_->Enable(); !st) return st;
  return {};
}

void LiveTriggers::Poll(int timeout_ms, std::vector<SnapshotDecision>& out, bool final) {
  std::vector<pollfd> fds;
  if (syscalls_)
    for (int fd : syscalls_->Fds()) fds.push_back(pollfd{fd, POLLIN, 0});
  if (probes_)
    for (int fd : probes_->Fds()) fds.push_back(pollfd{fd, POLLIN, 0});
  if (timeout_ms > 0) {
    if (fds.empty()) {
      timespec nap{timeout_ms / 1000, (timeout_ms % 1000) * 1000000L};
      nanosleep(&nap, nullptr);
    } else {
      poll(fds.data(), fds.size(), timeout_ms);
    }
  }
  // Events reach their per-CPU rings a little after their time stamps, so a ring drained now may
  // still receive older events: only events older than the drain's start minus a margin are fed
  // (in time order); the rest wait for the next poll, or for the final one.
  const uint64_t drain_start = MonotonicNowNs();
  if (syscalls_) syscalls_->Drain(held_);
  if (probes_) probes_->Drain(held_);
  std::stable_sort(held_.begin(), held_.end(),
                   [](const TriggerEvent& a, const TriggerEvent& b) { return a.time_ns < b.time_ns; });
  const uint64_t watermark = final ? ~uint64_t{0} : drain_start - std::min(drain_start, kReorderNs);
  size_t fed = 0;
  for (; fed < held_.size() && held_[fed].time_ns <= watermark; ++fed) {
    const TriggerEvent& e = held_[fed];
    last_ns_ = std::max(last_ns_, e.time_ns);
    if (auto d = engine_->OnEvent(e)) out.push_back(*d);
  }
  held_.erase(held_.begin(), held_.begin() + static_cast<std::ptrdiff_t>(fed));
  if (ticks_) {
    TriggerEvent tick;
    tick.kind = TriggerEvent::Kind::kTick;
    tick.time_ns = std::max(std::min(drain_start, watermark), last_ns_);
    last_ns_ = tick.time_ns;
    if (auto d = engine_->OnEvent(tick)) out.push_back(*d);
  }
}

uint64_t LiveTriggers::lost() const {
  return (syscalls_ ? syscalls_->lost() : 0) + (probes_ ? probes_->lost() : 0);
}

}  // namespace ptprof::record::triggers
