#!/usr/bin/env python3
"""Robustness of `ptprof record --backend swbt` (the software branch tracer, docs/swbt.md).

Each program runs natively untraced and then under the tracer (a short sampling period so that
bursts overlap everything the program does): no hang (every run has a timeout), no crash, the
same exit status and output as untraced, an archive with the bursts collected so far, and every
recorded branch checked against the binaries by swbt_check (a real branch at `from`, a direct one
going exactly to `to`, straight-line code between consecutive branches).

Programs: recursion (indirect calls, jump table, qsort callback), threads (tools/workloads), a
program that creates threads in waves while traced, signals (tools/workloads: its own handlers,
a timer interrupting a busy loop, SIGSEGV + siglongjmp), a program that calls exit() from a
hot loop (bursts in flight at exit), one that forks and execs, and one that crashes.
SKIPs (77) when perf_event_open of a hardware breakpoint is not allowed here, or its breakpoints
do not fire.
"""
import json
import os
import subprocess
import sys
import tempfile

PTPROF = os.environ["PTPROF"]
BUILD = os.path.dirname(PTPROF)
WORKLOADS = os.path.join(BUILD, "src", "record")
CHECK = os.path.join(BUILD, "src", "record", "swbt", "swbt_check")
TIMEOUT = 40

passed = failed = 0


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"ok    {name}")
    else:
        failed += 1
        print(f"FAIL  {name} {detail}")


SOURCES = {
    "waves": r"""
#include <pthread.h>
#include <stdio.h>
static long fib(long n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
static void* work(void* arg) { return (void*)fib((long)arg); }
int main(void) {
  long total = 0;
  for (int wave = 0; wave < 4; ++wave) {  /* threads are created while tracing is on */
    pthread_t t[3];
    for (long i = 0; i < 3; ++i) pthread_create(&t[i], 0, work, (void*)(24 + i));
    total += fib(25);  /* long enough for samples to land even on a loaded machine */
    for (int i = 0; i < 3; ++i) { void* r; pthread_join(t[i], &r); total += (long)r; }
  }
  printf("total %ld\n", total);
  return 0;
}
""",
    "exit_in_burst": r"""
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static volatile unsigned long sink;
static long ns(const struct timespec* t) { return t->tv_sec * 1000000000L + t->tv_nsec; }
int main(void) {
  struct timespec t0, prev, t;
  int slow = 0;
  printf("looping\n");  /* printed first: a write(2) at the end would end the burst */
  fflush(stdout);
  clock_gettime(CLOCK_MONOTONIC, &t0);
  prev = t0;
  for (unsigned long i = 0;; ++i) {  /* a hot loop of branches; exit() from inside it */
    sink += i & 1 ? i : i >> 1;
    if ((i & 0x3f) == 0) {
      clock_gettime(CLOCK_MONOTONIC, &t);
      /* 64 iterations take about a microsecond untraced; inside a burst every branch traps
         (microseconds each). Three slow stretches in a row are a burst, not a preemption:
         exit() then, a few hundred branches into a burst of 1024. Untraced, after a second. */
      slow = ns(&t) - ns(&prev) > 20000 ? slow + 1 : 0;
      prev = t;
      if (slow == 3 || ns(&t) - ns(&t0) > 1000000000L) exit(3);
    }
  }
}
""",
    "fork_exec": r"""
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
static long fib(long n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
int main(int argc, char** argv) {
  printf("parent %ld\n", fib(29));
  fflush(stdout);
  pid_t child = fork();
  if (child == 0) {  /* the child traces itself with its own events, then execs */
    printf("child %ld\n", fib(28));
    fflush(stdout);
    execl(argv[1], argv[1], "27", (char*)0);
    _exit(126);
  }
  int status = 0;
  waitpid(child, &status, 0);
  printf("child status %d, parent again %ld\n", WEXITSTATUS(status), fib(20));
  return 0;
}
""",
}


def run(args, env=None):
    try:
        p = subprocess.run(args, capture_output=True, text=True, timeout=TIMEOUT, env=env)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return None, "", "timeout"


def breakpoints_usable(tmp):
    """A probe: can this process open an execute breakpoint (perf_event_paranoid, seccomp), and
    does it fire (some virtual machines accept breakpoints and never report a hit)? None when
    both hold, else why not."""
    src = os.path.join(tmp, "probe.c")
    with open(src, "w") as f:
        f.write(r"""
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
__attribute__((noinline)) void probed(volatile int *calls) { *calls = *calls + 1; }
int main(void) {
  struct perf_event_attr a; memset(&a, 0, sizeof a);
  a.size = sizeof a; a.type = PERF_TYPE_BREAKPOINT; a.bp_type = HW_BREAKPOINT_X;
  a.bp_addr = (unsigned long)&probed; a.bp_len = sizeof(long);
  a.disabled = 1; a.exclude_kernel = 1; a.exclude_hv = 1;
  int fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
  if (fd < 0) return 1;
  ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
  volatile int calls = 0;
  for (int i = 0; i < 3; i++) probed(&calls);
  ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
  unsigned long long hits = 0;
  if (read(fd, &hits, sizeof hits) != sizeof hits) return 2;
  return hits == 3 ? 0 : 2;
}
""")
    exe = os.path.join(tmp, "probe")
    if subprocess.run(["cc", "-O1", "-o", exe, src]).returncode != 0:
        return "the breakpoint probe does not compile"
    rc = subprocess.run([exe]).returncode
    if rc == 1:
        return "perf_event_open of an execute breakpoint is not allowed here"
    if rc != 0:
        return "hardware execute breakpoints do not fire on this machine"
    return None


def record_and_check(tmp, name, argv, period="0.2ms", expect_bursts=True, depth=16):
    out = os.path.join(tmp, name + ".ptar")
    native = run(argv)
    traced = run([PTPROF, "record", "--backend", "swbt", "--sample-period", period, "--lbr-depth",
                  str(depth), "-o", out, "--"] + argv)
    check(f"{name}: no hang", traced[0] is not None, traced[2][-300:])
    if traced[0] is None:
        return None
    check(f"{name}: ptprof record succeeds", traced[0] == 0, traced[2][-300:])
    check(f"{name}: same output as untraced", traced[1] == native[1],
          f"{native[1]!r} vs {traced[1]!r}")
    status = "exit status %d" % native[0] if native[0] >= 0 else "killed by signal %d" % -native[0]
    check(f"{name}: same exit as untraced ({status})", status in traced[2], traced[2][-300:])
    if not os.path.exists(out):
        check(f"{name}: archive written", False)
        return None
    p = subprocess.run([CHECK, out], capture_output=True, text=True, timeout=TIMEOUT)
    try:
        summary = json.loads(p.stdout)
    except ValueError:
        check(f"{name}: swbt_check output", False, p.stderr[-300:])
        return None
    check(f"{name}: every branch consistent with the binaries ({summary['verified']} verified, "
          f"{summary['unverifiable']} in [vdso])", summary["bad"] == 0,
          "; ".join(summary["counterexamples"][:3]))
    counted = summary["counters"].get("bursts") if summary["counters"] else None
    if counted is not None:
        check(f"{name}: every burst the tracer counted is in the archive ({counted})",
              summary["bursts"] == counted)
    if expect_bursts:
        check(f"{name}: bursts recorded ({summary['bursts']} bursts, {summary['branches']} "
              f"branches)", summary["bursts"] > 0 and summary["branches"] > 0)
    print(f"      end reasons {json.dumps(summary['end_reasons'])}")
    return summary


def main():
    with tempfile.TemporaryDirectory() as tmp:
        why = breakpoints_usable(tmp)
        if why:
            print("SKIP: " + why)
            return 77
        exes = {}
        for name, source in SOURCES.items():
            src = os.path.join(tmp, name + ".c")
            with open(src, "w") as f:
                f.write(source)
            exes[name] = os.path.join(tmp, name)
            subprocess.run(["cc", "-O1", "-pthread", "-o", exes[name], src], check=True)

        recursion = os.path.join(WORKLOADS, "workload_recursion")
        # fib(28): about 17 samples of 0.2 ms; fib(24) ran 1.5 ms, one or two samples, and
        # under load now and then none that began a burst.
        record_and_check(tmp, "recursion", [recursion, "28"])
        threads = record_and_check(tmp, "threads", [os.path.join(WORKLOADS, "workload_threads")],
                                   expect_bursts=False)
        waves = record_and_check(tmp, "thread waves", [exes["waves"]])
        if waves:
            traced = waves["counters"].get("threads_traced", 0)
            check(f"thread waves: threads created during tracing are traced ({traced} of 13)",
                  traced == 13)
        record_and_check(tmp, "signals", [os.path.join(WORKLOADS, "workload_signals")])
        # Long bursts (1024 branches); the program calls exit() once it sees itself slowed
        # down by a burst, so that one is in flight at exit whatever the host's load. (It
        # exited after half a second before, and in one CI run six tries in a row missed.)
        ex = record_and_check(tmp, "exit in a burst", [exes["exit_in_burst"]], period="0.1ms",
                              depth=1024)
        if ex:
            # The burst in flight ends either in the tracer's exit handler (thread_exit) or when
            # its path reaches the tracer's destructor (breakpoint_failed: never in the tracer).
            ended = ex["counters"].get("ended", {})
            early = ended.get("thread_exit", 0) + ended.get("breakpoint_failed", 0)
            check(f"exit in a burst: the burst in flight at exit is written ({early})", early >= 1)
        fe = record_and_check(tmp, "fork and exec", [exes["fork_exec"], recursion])
        if fe:
            processes = fe["counters"].get("threads_traced", 0)
            check(f"fork and exec: parent, child and exec'd image each traced ({processes})",
                  processes == 3)
        record_and_check(tmp, "crash", [os.path.join(WORKLOADS, "workload_crash")],
                         expect_bursts=False)

        # Bad input.
        out = os.path.join(tmp, "bad.ptar")
        rc, _, err = run([PTPROF, "record", "--backend", "swbt", "--sample-period", "soon", "-o",
                          out, "--", "true"])
        check("bad --sample-period: usage error (2)", rc == 2 and "soon" in err, err)
        rc, _, err = run([PTPROF, "record", "--backend", "swbt", "--sample-period", "10us", "-o",
                          out, "--", "true"])
        check("too short --sample-period: usage error (2)", rc == 2, err)
        rc, _, err = run([PTPROF, "record", "--backend", "swbt", "--lbr-depth", "0", "-o", out,
                          "--", "true"])
        check("--lbr-depth 0: usage error (2)", rc == 2, err)
        rc, _, err = run([PTPROF, "record", "--backend", "swbt", "-o", out, "--",
                          os.path.join(tmp, "no-such-program")])
        check("missing program: bad input (1)", rc == 1 and "no-such-program" in err, err)
        rc, _, err = run([PTPROF, "record", "--backend", "swbt", "-o",
                          os.path.join(tmp, "recursion.ptar"), "--", "true"])
        check("existing output: bad input (1)", rc == 1 and "exists" in err, err)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
