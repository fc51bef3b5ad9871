// Records a child's syscalls through the raw_syscalls tracepoints for real, counts them, and runs
// the latency trigger over them.
#include "src/record/triggers/syscall_tracepoints.h"

#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ctime>
#include <optional>
#include <vector>

#include <catch2/catch.hpp>

#include "src/record/triggers/tracefs.h"

using namespace ptprof::record::triggers;

TEST_CASE("a tracepoint format file gives the field offsets") {
  const std::string format =
      "name: sys_enter\nID: 21\nformat:\n"
      "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
      "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
      "\tfield:long id;\toffset:8;\tsize:8;\tsigned:1;\n"
      "\tfield:unsigned long args[6];\toffset:16;\tsize:48;\tsigned:0;\n";
  auto id = FindFieldInFormat(format, "id", "f");
  REQUIRE(id);
  CHECK(id->offset == 8);
  CHECK(id->size == 8);
  auto args = FindFieldInFormat(format, "args", "f");
  REQUIRE(args);
  CHECK(args->offset == 16);
  CHECK(args->size == 48);
  CHECK(FindFieldInFormat(format, "ret", "f").error().message == "f: no field 'ret'");
}

TEST_CASE("the kernel filter text names each syscall kept") {
  CHECK(SyscallFilterText({}).empty());
  CHECK(SyscallFilterText({35}) == "id == 35");
  CHECK(SyscallFilterText({35, 230}) == "id == 35 || id == 230");
}

namespace {
// The child waits for a byte on `go`, then makes `fast` getpid calls and `slow` 20 ms sleeps,
// each followed by a nanosleep(0) (fast unless the loaded host keeps the child off the CPU).
pid_t StartChild(int go, int fast, int slow) {
  const pid_t pid = fork();
  if (pid != 0) return pid;
  char byte;
  if (read(go, &byte, 1) != 1) _exit(2);
  for (int i = 0; i < fast; ++i) syscall(SYS_getpid);
  for (int i = 0; i < slow; ++i) {
    timespec ts{0, 20000000};
    syscall(SYS_nanosleep, &ts, nullptr);
    timespec zero{0, 0};
    syscall(SYS_nanosleep, &zero, nullptr);
  }
  _exit(0);
}

// What the tracepoints saw of a child making `fast` getpid calls and `slow` sleeps (StartChild),
// or nullopt (with a warning) where this machine cannot open them.
struct Recorded {
  pid_t child = 0;
  std::vector<TriggerEvent> events;
  uint64_t lost = 0;
};
std::optional<Recorded> RecordChild(const SyscallTracepoints::Options& options, int fast, int slow) {
  int pipefd[2];
  REQUIRE(pipe(pipefd) == 0);
  Recorded out;
  out.child = StartChild(pipefd[0], fast, slow);
  auto tp = SyscallTracepoints::Open(out.child, options);
  if (!tp) {
    kill(out.child, SIGKILL);
    waitpid(out.child, nullptr, 0);
    close(pipefd[0]);
    close(pipefd[1]);
    WARN("skipped: " << tp.error().message);
    return std::nullopt;
  }
  REQUIRE((*tp)->Enable());
  REQUIRE(write(pipefd[1], "g", 1) == 1);
  int status = 0;
  REQUIRE(waitpid(out.child, &status, 0) == out.child);
  REQUIRE(WIFEXITED(status));
  (*tp)->Drain(out.events);
  out.lost = (*tp)->lost();
  close(pipefd[0]);
  close(pipefd[1]);
  return out;
}
}  // namespace

TEST_CASE("raw_syscalls tracepoints count a child's syscalls (live)") {
  for (auto scope : {SyscallTracepoints::Scope::kPerCpu, SyscallTracepoints::Scope::kPerThread}) {
    SyscallTracepoints::Options options;
    options.scope = scope;
    auto recorded = RecordChild(options, 500, 3);
    if (!recorded) return;
    const pid_t child = recorded->child;
    const std::vector<TriggerEvent>& events = recorded->events;
    CHECK(recorded->lost == 0);
    int getpid_enter = 0, getpid_exit = 0, sleeps = 0;
    SnapshotPolicy policy;
    // 10 ms: far above what a busy host adds to a nanosleep(0), far below the 20 ms sleeps.
    policy.triggers.push_back(*ParseTrigger("syscall-latency>10ms:nanosleep"));
    TriggerEngine engine(policy);
    std::vector<SnapshotDecision> cuts;
    for (const TriggerEvent& e : events) {
      CHECK(e.tid == static_cast<uint32_t>(child));
      if (e.syscall == SYS_getpid)
        (e.kind == TriggerEvent::Kind::kSyscallEnter ? getpid_enter : getpid_exit)++;
      if (e.syscall == SYS_nanosleep && e.kind == TriggerEvent::Kind::kSyscallEnter) ++sleeps;
      if (auto d = engine.OnEvent(e)) cuts.push_back(*d);
    }
    CHECK(getpid_enter == 500);
    CHECK(getpid_exit == 500);
    CHECK(sleeps == 6);
    REQUIRE(cuts.size() == 3);
    for (const auto& d : cuts) {
      CHECK(d.latency_ns >= 20000000);
      CHECK(d.tid == static_cast<uint32_t>(child));
    }
    // Times are CLOCK_MONOTONIC, in order.
    for (size_t i = 1; i < events.size(); ++i) CHECK(events[i - 1].time_ns <= events[i].time_ns);
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    CHECK(events.back().time_ns <= static_cast<uint64_t>(now.tv_sec) * 1000000000 + now.tv_nsec);
  }
}

TEST_CASE("a filtered ring holds only the syscalls asked for (live)") {
  SyscallTracepoints::Options options;
  options.only_syscalls = {SYS_nanosleep};
  auto recorded = RecordChild(options, 300, 2);
  if (!recorded) return;
  CHECK(recorded->lost == 0);
  // Two 20 ms sleeps and two nanosleep(0), each entered and left; none of the 300 getpid calls.
  CHECK(recorded->events.size() == 8);
  for (const TriggerEvent& e : recorded->events) CHECK(e.syscall == SYS_nanosleep);
}
