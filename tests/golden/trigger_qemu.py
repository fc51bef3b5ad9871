#!/usr/bin/env python3
"""addr=, signal= and every= triggers on the emulated backend (`ptprof record --backend qemu
--snapshot-on ...`; SKIP without qemu-x86_64):

- addr=slow_nanosleep (a symbol of the program, resolved where QEMU loaded it): one snapshot per
  call, each ending with the function's first instruction;
- signal=USR2: a shell sends itself USR2 twice (with a handler); the emulator's deliveries are
  read from the signal_deliver tracepoint: two snapshots of that thread;
- every=50ms: the plugin's clock (at syscalls and every full buffer): snapshots at least 50 ms
  apart;
- a symbol the program lacks: exit 1, named.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

PTPROF = os.environ["PTPROF"]
BUILD = os.path.dirname(PTPROF)
WORKLOAD = os.path.join(BUILD, "src", "record", "workload_slow_syscall")

passed = failed = 0


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"ok    {name}")
    else:
        failed += 1
        print(f"FAIL  {name}: {detail}")


def record(out, trigger, command):
    return subprocess.run([PTPROF, "record", "-o", out, "--force", "--pre", "16K", "--snapshot-on",
                           trigger, "--"] + command, capture_output=True, text=True)


def snapshots(archive, label):
    r = subprocess.run([PTPROF, "info", "--format", "json", archive], capture_output=True, text=True)
    if r.returncode != 0:
        return []
    return [t for t in json.loads(r.stdout)["manifest"]["triggers"] if t.get("label") == label]


def main():
    if not shutil.which("qemu-x86_64"):
        print("SKIP: qemu-x86_64 is not installed (tools/setup.sh installs qemu-user)")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "q.ptar")
        r = record(out, "addr=slow_nanosleep", [WORKLOAD, "3", "100", "5"])
        snaps = snapshots(out, "addr=slow_nanosleep") if r.returncode == 0 else []
        check("addr=slow_nanosleep: one snapshot per call (3)", len(snaps) == 3,
              f"{len(snaps)}; {r.stderr.strip()}")
        for t in snaps:
            d = subprocess.run([PTPROF, "decode", "--insn", "--stream", t["stream"], out],
                               capture_output=True, text=True)
            lines = [l for l in d.stdout.splitlines() if l.strip() and "[" not in l]
            last = lines[-1] if lines else ""
            check(f"{t['stream']}: ends with slow_nanosleep's first instruction",
                  d.returncode == 0 and "<slow_nanosleep>" in last, last)

        r = record(out, "signal=USR2", ["sh", "-c", "trap : USR2; kill -USR2 $$; kill -USR2 $$; true"])
        if r.returncode != 0 and "perf_event_open" in r.stderr:
            print("note  signal= skipped: " + r.stderr.strip())
        else:
            snaps = snapshots(out, "signal=USR2") if r.returncode == 0 else []
            check("signal=USR2: two deliveries, two snapshots", len(snaps) == 2,
                  f"{len(snaps)}; {r.stderr.strip()}")

        r = record(out, "every=50ms", [WORKLOAD, "4", "100", "50"])
        snaps = snapshots(out, "every=50ms") if r.returncode == 0 else []
        gaps = [b["time_ns"] - a["time_ns"] for a, b in zip(snaps, snaps[1:])]
        check("every=50ms: snapshots over a 0.2 s run", 2 <= len(snaps) <= 10,
              f"{len(snaps)}; {r.stderr.strip()}")
        check("every=50ms: at least 50 ms apart", all(g >= 50_000_000 for g in gaps), str(gaps))

        r = record(out, "addr=no_such_function", [WORKLOAD, "1", "1", "1"])
        check("addr= with a symbol the program lacks: exit 1, named",
              r.returncode == 1 and "no symbol 'no_such_function'" in r.stderr, r.stderr.strip())
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


sys.exit(main())
