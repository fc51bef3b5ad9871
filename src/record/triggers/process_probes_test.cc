#include "src/record/triggers/process_probes.h"

#include <linux/perf_event.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <string>

#include <catch2/catch.hpp>

#include "src/record/triggers/breakpoint_probe.h"
#include "src/record/triggers/live_triggers.h"
#include "src/record/triggers/trigger_spec.h"

namespace tr = ptprof::record::triggers;

namespace {

__attribute__((noinline)) void ProbeTarget(volatile int* counter) {
  *counter = *counter + 1;
  asm volatile("" ::: "memory");
}

void OnUsr2(int) {}

// A child that waits for `go`, calls ProbeTarget three times and gets SIGUSR2 twice.
pid_t StartChild(int go) {
  const pid_t pid = fork();
  if (pid == 0) {
    std::signal(SIGUSR2, OnUsr2);
    char byte = 0;
    if (read(go, &byte, 1) != 1) _exit(3);
    volatile int counter = 0;
    for (int i = 0; i < 3; ++i) ProbeTarget(&counter);
    raise(SIGUSR2);
    usleep(1000);
    raise(SIGUSR2);
    _exit(counter == 3 ? 0 : 4);
  }
  return pid;
}

}  // namespace

TEST_CASE("ParseProbeSample reads breakpoint and signal samples") {
  // Breakpoint: header, IP, pid/tid, time.
  uint8_t bp[8 + 24] = {};
  perf_event_header h{PERF_RECORD_SAMPLE, 0, sizeof bp};
  std::memcpy(bp, &h, 8);
  const uint64_t ip = 0x401136, time = 123456789;
  const uint32_t pid = 10, tid = 11;
  std::memcpy(bp + 8, &ip, 8);
  std::memcpy(bp + 16, &pid, 4);
  std::memcpy(bp + 20, &tid, 4);
  std::memcpy(bp + 24, &time, 8);
  tr::TriggerEvent e;
  REQUIRE(tr::ParseProbeSample(bp, sizeof bp, true, 0, 8, e));
  CHECK(e.kind == tr::TriggerEvent::Kind::kBreakpoint);
  CHECK(e.address == ip);
  CHECK(e.tid == tid);
  CHECK(e.time_ns == time);
  // Signal: header, pid/tid, time, raw size, raw (common_type 260, sig at 8).
  uint8_t sig[8 + 20 + 16] = {};
  std::memcpy(sig, &h, 8);
  std::memcpy(sig + 8, &pid, 4);
  std::memcpy(sig + 12, &tid, 4);
  std::memcpy(sig + 16, &time, 8);
  const uint32_t raw_size = 16;
  std::memcpy(sig + 24, &raw_size, 4);
  const uint16_t type = 260;
  std::memcpy(sig + 28, &type, 2);
  const int32_t usr2 = SIGUSR2;
  std::memcpy(sig + 28 + 8, &usr2, 4);
  REQUIRE(tr::ParseProbeSample(sig, sizeof sig, false, 260, 8, e));
  CHECK(e.kind == tr::TriggerEvent::Kind::kSignal);
  CHECK(e.signal == SIGUSR2);
  CHECK(e.tid == tid);
  CHECK_FALSE(tr::ParseProbeSample(sig, sizeof sig, false, 261, 8, e));  // another tracepoint
  CHECK_FALSE(tr::ParseProbeSample(sig, 20, false, 260, 8, e));          // cut short
}

TEST_CASE("ProcessProbes sees a child's breakpoint hits and signals (live)") {
  if (std::string why; !tr::ExecuteBreakpointsFire(&why)) {
    WARN("skipped: " << why);
    return;
  }
  int pipe_fds[2];
  REQUIRE(pipe(pipe_fds) == 0);
  const pid_t child = StartChild(pipe_fds[0]);
  REQUIRE(child > 0);
  tr::ProcessProbes::Options options;
  options.breakpoints = {reinterpret_cast<uint64_t>(&ProbeTarget)};
  options.signals = true;
  auto probes = tr::ProcessProbes::Open(child, options);
  if (!probes) {
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
    WARN("skipped: " << probes.error().message);
    return;
  }
  REQUIRE((*probes)->Enable());
  REQUIRE(write(pipe_fds[1], "g", 1) == 1);
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  std::vector<tr::TriggerEvent> events;
  (*probes)->Drain(events);
  int hits = 0, signals = 0;
  for (const auto& e : events) {
    CHECK(e.tid == static_cast<uint32_t>(child));
    if (e.kind == tr::TriggerEvent::Kind::kBreakpoint) {
      ++hits;
      CHECK(e.address == reinterpret_cast<uint64_t>(&ProbeTarget));
    }
    if (e.kind == tr::TriggerEvent::Kind::kSignal && e.signal == SIGUSR2) ++signals;
  }
  CHECK(hits == 3);
  CHECK(signals == 2);
  for (size_t i = 1; i < events.size(); ++i) CHECK(events[i - 1].time_ns <= events[i].time_ns);
  close(pipe_fds[0]);
  close(pipe_fds[1]);
}

TEST_CASE("LiveTriggers turns a child's breakpoint hits into decisions (live)") {
  if (std::string why; !tr::ExecuteBreakpointsFire(&why)) {
    WARN("skipped: " << why);
    return;
  }
  int pipe_fds[2];
  REQUIRE(pipe(pipe_fds) == 0);
  const pid_t child = StartChild(pipe_fds[0]);
  REQUIRE(child > 0);
  tr::SnapshotPolicy policy;
  auto spec = tr::ParseTrigger("addr=ProbeTarget");
  REQUIRE(spec);
  policy.triggers.push_back(*spec);
  auto signal = tr::ParseTrigger("signal=USR2");
  REQUIRE(signal);
  policy.triggers.push_back(*signal);
  tr::TriggerEngine engine(policy);
  engine.ResolveAddress(0, reinterpret_cast<uint64_t>(&ProbeTarget));
  auto live = tr::LiveTriggers::Open(child, engine, false);
  if (!live) {
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
    WARN("skipped: " << live.error().message);
    return;
  }
  REQUIRE((*live)->Enable());
  REQUIRE(write(pipe_fds[1], "g", 1) == 1);
  REQUIRE(waitpid(child, nullptr, 0) == child);
  std::vector<tr::SnapshotDecision> decisions;
  (*live)->Poll(0, decisions, true);
  REQUIRE(decisions.size() == 5);
  for (int i = 0; i < 3; ++i) CHECK(decisions[i].label == "addr=ProbeTarget");
  for (int i = 3; i < 5; ++i) CHECK(decisions[i].label == "signal=USR2");
  for (const auto& d : decisions) CHECK(d.tid == static_cast<uint32_t>(child));
  close(pipe_fds[0]);
  close(pipe_fds[1]);
}
