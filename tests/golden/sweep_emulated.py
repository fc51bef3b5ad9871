#!/usr/bin/env python3
"""End-to-end check of `ptprof sweep` on the emulated backend (skips without qemu-x86_64).

1. The same small sweep (Epsilon and CannyOptimize, PSB 2^8..2^12 and MTC off/3, one axis at a
   time) run twice gives identical trace sizes and packet counts.
2. Trace sizes never grow as the PSB period grows (other parameters fixed), and the TRF moves the
   other way: the largest PSB period has the worst (largest) TRF of the PSB axis.
3. The packet counts of every row equal an independent count: `ptprof dump --format jsonl` of the
   raw PT the sweep kept (-o DIR), packet by packet.
4. Bad input: an empty list, an unknown workload (the known ones listed), a workload that exits
   with a failure and one whose binary is missing (clear message, the other rows still reported,
   exit 1), a hardware backend that refuses here (a failed row, not a crash).
"""
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile

PTPROF = os.environ["PTPROF"]

passed = failed = 0


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"ok    {name}")
    else:
        failed += 1
        print(f"FAIL  {name}: {detail}")


def sweep(*args):
    return subprocess.run([PTPROF, "sweep", *args], capture_output=True, text=True)


GRID = ["--workload", "Epsilon", "--workload", "CannyOptimize", "--psb-period", "2^8..2^12",
        "--mtc-period", "off,3", "--grid", "axes", "--format", "json"]


def rows_of(run):
    return json.loads(run.stdout)["rows"]


def key(row):
    c = row["config"]
    return (row["workload"], c["psb_period"], c["mtc_period"], c["cyc_threshold"], c["tsc"])


def dump_counts(path):
    out = subprocess.run([PTPROF, "dump", "--format", "jsonl", path], capture_output=True,
                         text=True)
    if out.returncode != 0:
        return None
    counts = collections.Counter()
    for line in out.stdout.splitlines():
        packet = json.loads(line)
        counts[packet["packet"]] += 1
    return counts


def main():
    if shutil.which("qemu-x86_64") is None:
        print("SKIP: qemu-x86_64 is not installed (tools/setup.sh installs qemu-user)")
        return 77
    work = tempfile.mkdtemp(prefix="ptprof-sweep-golden-")
    try:
        first = sweep(*GRID, "-o", os.path.join(work, "a"))
        second = sweep(*GRID)
        check("sweep runs", first.returncode == 0 and second.returncode == 0,
              first.stderr + second.stderr)
        if first.returncode != 0 or second.returncode != 0:
            return 1
        a, b = rows_of(first), rows_of(second)
        check("6 rows per workload (5 PSB periods, MTC 3)", len(a) == 12, len(a))
        check("every row succeeded", all(r["ok"] for r in a), [r.get("error") for r in a])
        same = [(key(x), x["trace_bytes"], x["packets"]) == (key(y), y["trace_bytes"], y["packets"])
                for x, y in zip(a, b)]
        check("two runs give identical sizes and packet counts", len(a) == len(b) and all(same),
              [key(x) for x, s in zip(a, b) if not s])

        for workload in ("Epsilon", "CannyOptimize"):
            psb = sorted((r["config"]["psb_period"], r["trace_bytes"], r["trf"]) for r in a
                         if r["workload"] == workload and r["axis"] == "psb")
            sizes = [s for _, s, _ in psb]
            check(f"{workload}: sizes non-increasing in the PSB period",
                  len(sizes) == 5 and all(x >= y for x, y in zip(sizes, sizes[1:])), psb)
            check(f"{workload}: sizes fall from 2^8 to 2^12", sizes[0] > sizes[-1], sizes)
            check(f"{workload}: the largest PSB period has the largest TRF",
                  psb[-1][2] == max(t for _, _, t in psb if t is not None), psb)
            mtc = [r for r in a if r["workload"] == workload and r["config"]["mtc_period"] == 3]
            base = [r for r in a if r["workload"] == workload and r["config"]["psb_period"] == 4096
                    and r["config"]["mtc_period"] is None]
            check(f"{workload}: MTC 3 adds bytes and resolution",
                  len(mtc) == 1 and len(base) == 1 and
                  mtc[0]["trace_bytes"] > base[0]["trace_bytes"] and
                  mtc[0]["resolution"]["median_insns"] < base[0]["resolution"]["median_insns"],
                  (mtc, base))

        mismatches = []
        for row in a:
            counted = collections.Counter()
            for path in row.get("trace_files", []):
                got = dump_counts(path)
                if got is None:
                    mismatches.append((path, "dump failed"))
                    continue
                counted.update(got)
            if dict(counted) != row["packets"]:
                mismatches.append((key(row), dict(counted), row["packets"]))
        check("packet counts equal ptprof dump of the kept traces",
              not mismatches and all(r.get("trace_files") for r in a), mismatches[:2])

        empty = sweep("--workload", "Epsilon", "--psb-period", "")
        check("an empty list is a usage error", empty.returncode == 2 and
              "--psb-period: the list is empty" in empty.stderr, empty.stderr)
        unknown = sweep("--workload", "NoSuch")
        check("an unknown workload lists the known ones", unknown.returncode == 2 and
              "unknown workload (known: TailFact, Fib, ParseInt" in unknown.stderr, unknown.stderr)
        bad = sweep("--workload", "/bin/false", "--workload", "/nonexistent/program",
                    "--workload", "Epsilon", "--psb-period", "1024,4096")
        check("failing workloads: exit 1", bad.returncode == 1, bad.returncode)
        check("a workload that fails names its exit status",
              "false psb=1024,mtc=off,cyc=off,tsc=on: /bin/false exited with status 1" in
              bad.stderr, bad.stderr)
        check("a missing binary is named",
              "/nonexistent/program: missing or not executable" in bad.stderr, bad.stderr)
        check("the other rows are still reported",
              sum(1 for l in bad.stdout.splitlines()
                  if l.startswith("Epsilon ") and "not measured (emulated)" in l) == 2 and
              "4 of 6 rows failed" in bad.stdout, bad.stdout)
        hw = sweep("--workload", "Epsilon", "--backend", "intel_pt", "--repeat", "1")
        check("a hardware backend that refuses fails its row cleanly",
              hw.returncode == 1 and "FAILED: ptprof record --backend intel_pt exited with status"
              in hw.stdout, hw.stdout + hw.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
