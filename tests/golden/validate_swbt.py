#!/usr/bin/env python3
"""`ptprof validate` of a native software-branch-tracer recording against an emulated PT recording.

The same program runs twice: natively under `ptprof record --backend swbt` (bursts of 16 taken
branches from task-clock samples and hardware breakpoints) and under `ptprof record --backend qemu`
(the whole flow as PT). The two runs load the program at different addresses; validate maps both
to (file, offset). Every burst must map into A's files and be consistent with A's flow (found as
a contiguous run of its taken branches, or a feasible path): >= 99%. Profile similarity must be
reported by its method. Programs: the sweep's Sort workload and Debian's gzip on a generated
input. SKIPs without qemu-x86_64, or when this host allows no execute breakpoints (no bursts).
"""
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from tally import Tally  # noqa: E402

PTPROF = os.environ["PTPROF"]
BUILD = os.path.dirname(PTPROF)
SORT = os.path.join(BUILD, "tools", "workloads", "sweep_sort")
PLUGIN = os.path.join(BUILD, "src", "record", "qemu", "libptprof_qemu.so")
t = Tally()

if not shutil.which("qemu-x86_64"):
    print("SKIP: qemu-x86_64 is not installed (tools/setup.sh installs qemu-user)")
    sys.exit(77)
for needed in (SORT, PLUGIN):
    if not os.path.exists(needed):
        print(f"SKIP: {needed} is not built")
        sys.exit(77)
os.environ.setdefault("PTPROF_QEMU_PLUGIN", PLUGIN)


def record(backend, out, command, *options):
    r = subprocess.run([PTPROF, "record", "--backend", backend, "--force", "-o", out, *options,
                        "--", *command], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       text=True, timeout=240)
    return r.returncode == 0, r.stderr.strip()[-300:]


def validate(a, b):
    r = subprocess.run([PTPROF, "validate", "--format", "json", a, b], capture_output=True,
                       text=True, timeout=240)
    return json.loads(r.stdout) if r.returncode == 0 else None, r.stderr.strip()[-300:]


with tempfile.TemporaryDirectory() as tmp:
    text = os.path.join(tmp, "input.txt")
    rng = random.Random(1)
    words = ["alpha", "beta", "gamma", "delta", "trace", "packet", "branch", "kernel", "syscall"]
    with open(text, "w") as f:
        f.write(" ".join(rng.choice(words) for _ in range(80000)))
    cases = [("sort", [SORT], "0.2ms"), ("gzip", ["/bin/gzip", "-c", "-6", text], "0.2ms")]
    for name, command, period in cases:
        swbt, qemu = os.path.join(tmp, name + "-swbt.ptar"), os.path.join(tmp, name + "-pt.ptar")
        ok, err = record("swbt", swbt, command, "--sample-period", period)
        if not ok:
            t.check(f"{name}: swbt recording", False, err)
            continue
        ok, err = record("qemu", qemu, command)
        if not ok:
            t.check(f"{name}: emulated PT recording", False, err)
            continue
        report, err = validate(qemu, swbt)
        if report is None:
            t.check(f"{name}: validate runs", False, err)
            continue
        bursts = report["b"]["bursts"]
        if bursts == 0:
            t.skip(f"{name}: consistency", "the tracer collected no bursts (breakpoints not allowed?)")
            continue
        consistency = report["path_consistency"]
        similarity = report["profile_similarity"]
        print(f"info  {name}: {bursts} bursts, {report['mapped_percent']:.1f}% mapped, "
              f"{consistency['in_flow_percent']:.2f}% in the flow, "
              f"{consistency['feasible_only_percent']:.2f}% feasible only, "
              f"{consistency['inconsistent']} inconsistent; edge overlap "
              f"{similarity['edge_overlap_percent']:.1f}%, range overlap "
              f"{similarity['range_overlap_percent']:.1f}%")
        # A sample can land while the program runs in the vDSO (clock_gettime), which no file
        # holds: such a burst is unmapped by design (docs/validate.md). Anything more is a fault.
        unmapped = consistency.get("unmapped_examples", [])
        if unmapped:
            print(f"      unmapped: {unmapped[:2]}")
        t.check(f"{name}: bursts map into the PT recording's files (>= 98%; the vDSO is in none)",
                report["mapped_percent"] >= 98.0, f"{report['mapped_percent']}%")
        t.check(f"{name}: path consistency >= 99% of bursts",
                consistency["consistent_percent"] >= 99.0,
                f"{consistency['consistent_percent']}%: {consistency['counterexamples'][:3]}")
        t.check(f"{name}: profile similarity reported with its method",
                "profile_diff" in similarity.get("method", "")
                and 0.0 < similarity["edge_overlap_percent"] <= 100.0, str(similarity)[:200])
t.finish()
