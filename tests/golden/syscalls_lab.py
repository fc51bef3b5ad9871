#!/usr/bin/env python3
"""`ptprof syscalls` on the kernel lab traces, checked against an independent reading of the
decoded flow; and its bad-input messages.

traces/lab/syscalls-nop.ptar and syscalls-function.ptar record `lab_syscalls 10` (docs/lab.md):
10 rounds of getpid, mmap+munmap, openat+read+close, kernel and user traced. This script reads
`ptprof decode --blocks` itself: a syscall starts at a user block ending in `syscall`, its kernel
instructions are every kernel block until the next user block, its name is the first
`__x64_sys_NAME` symbol in between. Checked:
- `ptprof syscalls --instances --format json` lists the same syscalls in the same order with the
  same names; the workload's syscalls have the same kernel instruction counts (others that differ
  are printed as info: on syscalls-function.ptar the final ioctl, whose kernel path ptprof's
  stack closes earlier than "the next user block"); each workload syscall occurs once per round;
- the summary's counts and kernel-instruction maxima equal the instances'; CSV has one row each;
- every instance has a latency in ns (the lab's time base; these traces have TSC packets only, no
  MTC/CYC, so most latencies are 0 at that resolution) and --min-latency keeps exactly the
  instances at least that slow;
- a syscall name that does not exist is a usage error (2) naming near names; one that never occurs
  is exit 1 naming it; a trace without syscalls (libipt's call_direct-ret_compressed) says so and
  exits 0 with an empty table; a truncated archive is a one-line error (exit 1).
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from tally import Tally  # noqa: E402

PTPROF = os.environ["PTPROF"]
ROOT = os.environ["SOURCE_ROOT"]
SHARED = os.environ.get("SHARED_TESTDATA", "")
TRACES = [os.path.join(ROOT, "traces", "lab", n) for n in ("syscalls-nop.ptar", "syscalls-function.ptar")]
WORKLOAD = ["getpid", "mmap", "munmap", "openat", "read", "close"]
BLOCK = re.compile(r"^([0-9a-f]{16})\.\.([0-9a-f]{16})\s+(\d+) insns\s+(\S+)\s*(?:<([^>]*)>)?\s*$")
HANDLER = re.compile(r"^__x64_sys_(\w+?)(?:\+0x[0-9a-f]+)?$")


def run(args):
    p = subprocess.run([PTPROF] + args, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def kernel(address):
    return int(address, 16) >= 0xffff800000000000


def independent(listing):
    """[(name, kernel instructions)] of every syscall that returned to user space."""
    found, current = [], None
    for line in listing.splitlines():
        m = BLOCK.match(line)
        if not m:
            if line.startswith("[gap"):
                current = None
            continue
        first, _, insns, end, symbol = m.groups()
        if not kernel(first):
            if current is not None:
                found.append((current[0] or "unknown", current[1]))
                current = None
            if end == "syscall":
                current = [None, 0]
            continue
        if current is not None:
            current[1] += int(insns)
            h = HANDLER.match(symbol or "")
            if h and current[0] is None:
                current[0] = h.group(1)
    return found


def rounds_of(trace):
    _, out, _ = run(["info", trace])
    m = re.search(r"^source:.*lab_syscalls (\d+)", out, re.M)
    return int(m.group(1)) if m else None


def main():
    t = Tally()
    for trace in TRACES:
        name = os.path.basename(trace)
        if not os.path.exists(trace):
            t.skip(name, "trace missing")
            continue
        status, listing, err = run(["decode", "--blocks", trace])
        if status != 0:
            t.report(name + " decode", err.strip())
            continue
        expected = independent(listing)
        status, out, err = run(["syscalls", "--instances", "--format", "json", trace])
        if status != 0:
            t.report(name + " syscalls", err.strip())
            continue
        report = json.loads(out)
        # The parallel decode over PSB segments gives the analysis the same stream.
        status, parallel, err = run(["syscalls", "--instances", "--format", "json", "--jobs", "2",
                                     "--psb-segment", "16384", trace])
        t.check(f"{name}: syscalls --jobs 2 --psb-segment 16384 reports exactly what one thread does",
                status == 0 and parallel == out, err.strip())
        got = [(s["name"], s["kernel_insns"]) for s in report["instances"]]
        differ = [(i, a, b) for i, (a, b) in enumerate(zip(got, expected)) if a != b]
        t.check(f"{name}: {len(got)} syscalls in the decoded flow's order and names",
                [n for n, _ in got] == [n for n, _ in expected], f"{len(got)} vs {len(expected)}")
        t.check(f"{name}: the workload's syscalls have the decoded flow's kernel instructions",
                not [d for d in differ if d[1][0] in WORKLOAD], str(differ[:3]))
        for i, a, b in differ:
            print(f"info  {name}: instance {i} {a[0]}: ptprof {a[1]} kernel instructions, "
                  f"the decoded flow until the next user block {b[1]}")
        rounds = rounds_of(trace)
        counts = {s["name"]: s["count"] for s in report["summary"]}
        t.check(f"{name}: each workload syscall occurs once per round ({rounds})",
                rounds and all(counts.get(n) == rounds for n in WORKLOAD),
                f"counts {[(n, counts.get(n)) for n in WORKLOAD]}")
        for s in report["summary"]:
            mine = [i["kernel_insns"] for i in report["instances"] if i["name"] == s["name"]]
            if s["count"] != len(mine) or s["kernel_insns"]["max"] != max(mine):
                t.report(f"{name}: summary of {s['name']}", f"{s} vs {len(mine)} instances")
                break
        else:
            t.report(f"{name}: summaries agree with the instances", None)
        latencies = [i["latency_ns"] for i in report["instances"]]
        t.check(f"{name}: every instance has a latency in ns (the trace has a time base)",
                report["timed"] and all(isinstance(v, int) and v >= 0 for v in latencies),
                str(latencies[:5]))
        threshold = sorted(latencies)[len(latencies) // 2]
        status, out, err = run(["syscalls", "--instances", "--format", "csv", "--min-latency",
                                f"{threshold}ns", trace])
        rows = out.strip().splitlines()[1:]
        t.check(f"{name}: --min-latency {threshold}ns keeps the {sum(v >= threshold for v in latencies)} "
                "instances at least that slow", status == 0 and
                len(rows) == sum(v >= threshold for v in latencies), f"{status} {len(rows)} {err}")
        status, out, err = run(["syscalls", "--syscall", "getpid,openat", "--instances", trace])
        lines = [l for l in out.splitlines() if re.search(r"\s(getpid|openat)\s", l)]
        t.check(f"{name}: --syscall getpid,openat shows {2 * rounds} instances",
                status == 0 and len(lines) == 2 * rounds, f"{status} {len(lines)} {err}")

    nop = TRACES[0]
    status, out, err = run(["syscalls", "--syscall", "getpidd", nop])
    t.check("a syscall name that does not exist: usage error naming near names",
            status == 2 and "getpidd" in err and "getpid" in err.replace("getpidd", "") and
            len(err.strip().splitlines()) == 1, f"{status} {err!r}")
    status, out, err = run(["syscalls", "--syscall", "kill", nop])
    t.check("a syscall that never occurs: exit 1 naming it",
            status == 1 and "kill never occurs" in err, f"{status} {err!r}")

    case = os.path.join(SHARED, "libipt", "generated", "call_direct-ret_compressed")
    if SHARED and os.path.isdir(case):
        status, out, err = run(["syscalls", os.path.join(case, "call_direct-ret_compressed.pt"),
                                "--raw", os.path.join(case, "call_direct-ret_compressed.bin") + ":0x1000"])
        t.check("a trace without syscalls: a clear message, exit 0, an empty table",
                status == 0 and "no syscalls in the trace" in err and
                "0 syscalls shown (0 in the trace)" in out, f"{status} {out!r} {err!r}")
    else:
        t.skip("a trace without syscalls", "../shared/testdata/libipt is absent")

    with tempfile.TemporaryDirectory() as tmp:
        cut = os.path.join(tmp, "cut.ptar")
        with open(nop, "rb") as f:
            data = f.read()
        with open(cut, "wb") as f:
            f.write(data[: len(data) // 3])
        status, out, err = run(["syscalls", cut])
        t.check("a truncated archive: one-line error, exit 1",
                status == 1 and len(err.strip().splitlines()) == 1 and "cut.ptar" in err,
                f"{status} {err!r}")
    t.finish()


if __name__ == "__main__":
    main()
