#include "src/record/triggers/trigger_engine.h"
#include <csignal>

#include <catch2/catch.hpp>

using namespace ptprof::record::triggers;
using Kind = TriggerEvent::Kind;

namespace {
SnapshotPolicy PolicyOf(std::initializer_list<const char*> texts) {
  SnapshotPolicy policy;
  for (const char* text : texts) policy.triggers.push_back(*ParseTrigger(text));
  return policy;
}
TriggerEvent Sys(Kind kind, uint32_t tid, uint64_t nr, uint64_t t) {
  TriggerEvent e;
  e.kind = kind;
  e.tid = tid;
  e.syscall = nr;
  e.time_ns = t;
  return e;
}
}  // namespace

TEST_CASE("latency triggers pair entry and exit per thread and fire at exit") {
  TriggerEngine engine(PolicyOf({"syscall-latency>1ms:nanosleep"}));
  CHECK(engine.WantsSyscalls());
  // Thread 1 sleeps 5 ms while thread 2 makes fast calls in between.
  CHECK(!engine.OnEvent(Sys(Kind::kSyscallEnter, 1, 35, 1000)));
  CHECK(!engine.OnEvent(Sys(Kind::kSyscallEnter, 2, 35, 2000)));
  CHECK(!engine.OnEvent(Sys(Kind::kSyscallExit, 2, 35, 3000)));
  CHECK(!engine.OnEvent(Sys(Kind::kSyscallEnter, 2, 39, 4000)));
  CHECK(!engine.OnEvent(Sys(Kind::kSyscallExit, 2, 39, 2000000)));  // slow but getpid
  auto d = engine.OnEvent(Sys(Kind::kSyscallExit, 1, 35, 5001000));
  REQUIRE(d);
  CHECK(d->tid == 1);
  CHECK(d->time_ns == 5001000);
  CHECK(d->cut_ns == 5001000);
  CHECK(d->latency_ns == 5000000);
  CHECK(d->label == "syscall-latency>1ms:nanosleep");
  CHECK(d->sequence == 0);
  // Exactly the threshold does not fire ("longer than"); an exit without an entry does not either.
  CHECK(!engine.OnEvent(Sys(Kind::kSyscallEnter, 1, 35, 6000000)));
  CHECK(!engine.OnEvent(Sys(Kind::kSyscallExit, 1, 35, 7000000)));
  CHECK(!engine.OnEvent(Sys(Kind::kSyscallExit, 3, 35, 9000000)));
  CHECK(engine.fired() == 1);
}

TEST_CASE("syscall triggers fire at entry for listed calls") {
  TriggerEngine engine(PolicyOf({"syscall=getpid,write"}));
  CHECK(!engine.OnEvent(Sys(Kind::kSyscallEnter, 1, 35, 10)));
  CHECK(engine.OnEvent(Sys(Kind::kSyscallEnter, 1, 39, 20)));
  CHECK(!engine.OnEvent(Sys(Kind::kSyscallExit, 1, 39, 30)));
  auto d = engine.OnEvent(Sys(Kind::kSyscallEnter, 7, 1, 40));
  REQUIRE(d);
  CHECK(d->tid == 7);
  CHECK(d->syscall == 1);
  CHECK(d->sequence == 1);
}

TEST_CASE("the syscalls a kernel filter may keep: every named one, or all when one trigger takes any") {
  CHECK(TriggerEngine(PolicyOf({"syscall-latency>1ms:nanosleep", "syscall=write,getpid,write"}))
            .SyscallsWatched() == std::vector<uint64_t>{1, 35, 39});
  CHECK(TriggerEngine(PolicyOf({"syscall=getpid", "syscall-latency>1ms"})).SyscallsWatched().empty());
  CHECK(TriggerEngine(PolicyOf({"signal=USR2"})).SyscallsWatched().empty());
}

TEST_CASE("--max-snapshots and --min-interval limit the cuts") {
  SnapshotPolicy policy = PolicyOf({"syscall=getpid"});
  policy.max_snapshots = 3;
  policy.min_interval_ns = 100;
  policy.post_ns = 50;
  TriggerEngine engine(policy);
  std::vector<uint64_t> cuts;
  for (uint64_t t = 0; t < 1000; t += 30)
    if (auto d = engine.OnEvent(Sys(Kind::kSyscallEnter, 1, 39, t))) cuts.push_back(d->cut_ns);
  // Triggers at 0, 30, 60, ...: 0 is cut, then the first >= 100 after it (120), then 240; max 3.
  CHECK(cuts == std::vector<uint64_t>{50, 170, 290});
  CHECK(engine.Exhausted());
  CHECK(engine.suppressed() == 34 - 3);
}

TEST_CASE("every, signal, address and insns triggers") {
  TriggerEngine engine(PolicyOf({"every=1ms", "signal=USR2", "addr=0x401000", "insns=100"}));
  CHECK(!engine.WantsSyscalls());
  CHECK(engine.SmallestPeriodNs() == 1000000);
  CHECK(engine.Signals() == std::vector<int>{SIGUSR2});
  CHECK(engine.BreakpointAddresses() == std::vector<uint64_t>{0x401000});
  CHECK(engine.SmallestInsnsPeriod() == 100);
  TriggerEvent tick;
  tick.kind = Kind::kTick;
  int ticks = 0;
  for (uint64_t t = 0; t <= 5000000; t += 250000) {
    tick.time_ns = t;
    if (auto d = engine.OnEvent(tick)) {
      ++ticks;
      CHECK(d->label == "every=1ms");
      CHECK(d->trigger == 0);
    }
  }
  CHECK(ticks == 5);
  TriggerEvent signal;
  signal.kind = Kind::kSignal;
  signal.signal = SIGUSR1;
  CHECK(!engine.OnEvent(signal));
  signal.signal = SIGUSR2;
  CHECK(engine.OnEvent(signal)->trigger == 1);
  TriggerEvent bp;
  bp.kind = Kind::kBreakpoint;
  bp.address = 0x401001;
  CHECK(!engine.OnEvent(bp));
  bp.address = 0x401000;
  CHECK(engine.OnEvent(bp)->trigger == 2);
  TriggerEvent insns;
  insns.kind = Kind::kInsns;
  insns.tid = 4;
  int counted = 0;
  for (uint64_t n = 10; n <= 450; n += 10) {
    insns.insns = n;
    if (engine.OnEvent(insns)) ++counted;
  }
  CHECK(counted == 4);
}
