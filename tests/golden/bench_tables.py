#!/usr/bin/env python3
"""The decode-speed benchmarks (tools/bench) run and tell the truth about what they decoded.

Their times are not checked (a test never times anything); what they print about the decodes is:
- `parallel_bench --verify` on a recording, with one and two threads and the cold runs in fresh
  processes (`--cold 2`): every ptprof row gave the same events as ptprof's one-piece decode on
  libipt (a `verified:` line each, no `warning:`), every row decoded libipt's instruction count,
  and the cold runs' range and the two-thread line are printed.
- `delta_bench --jobs 1 --jobs 2` on the same recording: a table per thread count with every row,
  the same counts on both (instructions, intervals, frames, syscalls, branches), the table with
  each row's time and CPU time on both counts, and the machine's ceiling for each row (its
  one-thread run twice at once).
"""
import os
import re
import subprocess
import sys

from tally import Tally

ROOT = os.environ["SOURCE_ROOT"]
BUILD = os.path.dirname(os.environ["PTPROF"])
PARALLEL_BENCH = os.path.join(BUILD, "tools", "parallel_bench")
DELTA_BENCH = os.path.join(BUILD, "tools", "delta_bench")
RECORDING = os.path.join(ROOT, "traces", "qemu", "gzip.ptar")


def run(cmd):
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    return result.returncode, result.stdout, result.stderr


def check_parallel_bench(tally):
    code, out, err = run([PARALLEL_BENCH, "--repeat", "1", "--cold", "2", "--jobs", "1", "--jobs",
                          "2", "--psb-segment", "4096", "--verify", RECORDING])
    name = "parallel_bench --verify --cold 2"
    if code != 0:
        tally.report(name, f"exit {code}: {err.strip()[:200]}")
        return
    tally.check(name + ": no warning", "warning:" not in out, out[:400])
    verified = re.findall(r"^  verified: (.+) gave the same events", out, re.M)
    # ptprof's rows: libipt and fast, on 1 thread and on 2 (in parts and as one stream), and the
    # at-once row.
    tally.check(name + ": every ptprof row verified", len(verified) >= 5, f"verified: {verified}")
    header = re.search(r"^input: .*?, (\d+) instructions \(libipt\).*median of 2 runs", out, re.M)
    tally.check(name + ": the header says the cold runs' median", header is not None, out[:300])
    tally.check(name + ": the cold runs' range", "cold runs, fastest to slowest" in out, out[-400:])
    tally.check(name + ": the two-thread line",
                re.search(r"^2 threads: this machine's ceiling .* cold \d", out, re.M) is not None,
                out[-400:])


def delta_tables(out):
    """{thread count: {row label: details}} from delta_bench's tables."""
    tables = {}
    current = None
    for line in out.splitlines():
        header = re.match(r"^input .*?: (\d+) instructions, best of \d+ rounds, (\d+) threads?", line)
        if header:
            current = tables.setdefault(int(header.group(2)), {"insns": int(header.group(1))})
            continue
        row = re.match(r"^  (.+?)\s+[\d.]+ M insn/s  ratio [\d.]+(.*)$", line)
        if row and current is not None:
            current[row.group(1).strip()] = row.group(2).strip()
    return tables


def check_delta_bench(tally):
    code, out, err = run([DELTA_BENCH, "--repeat", "1", "--jobs", "1", "--jobs", "2",
                          "--psb-segment", "65536", RECORDING])
    name = "delta_bench --jobs 1 --jobs 2"
    if code != 0:
        tally.report(name, f"exit {code}: {err.strip()[:200]}")
        return
    tables = delta_tables(out)
    tally.check(name + ": a table per thread count", sorted(tables) == [1, 2], out[:400])
    if sorted(tables) != [1, 2]:
        return
    one, two = tables[1], tables[2]
    labels = sorted(k for k in one if k != "insns")
    tally.check(name + ": six rows", len(labels) == 6, f"{labels}")
    # The labels hold the counts (intervals, frames, instances, branches): the same on both.
    tally.check(name + ": the same counts on both thread counts",
                labels == sorted(k for k in two if k != "insns") and one["insns"] == two["insns"],
                f"{labels} / {sorted(two)}")
    bursts = re.search(r"(\d+) of (\d+) bursts found", one.get(next(
        (k for k in labels if k.startswith("validate")), ""), ""))
    tally.check(name + ": validate finds every burst",
                bursts is not None and bursts.group(1) == bursts.group(2), f"{bursts}")
    last = re.findall(r"^  (.+?)\s+1: +[\d.]+ ms, cpu +[\d.]+ \| 2: +[\d.]+ ms, cpu +[\d.]+, "
                      r"[\d.]+x faster, [\d.]+x the cpu$", out, re.M)
    tally.check(name + ": the table by thread count, a line per row", len(last) == 6, out[-900:])
    # The machine's ceiling: each row's one-thread run twice at once, its ratio, and ptprof's.
    ceilings = re.findall(r"^  (.+?)\s+\| 2 at once: +([\d.]+) ms, ceiling ([\d.]+)x, "
                          r"2 threads ([\d.]+)x$", out, re.M)
    tally.check(name + ": the ceiling table, a line per row", len(ceilings) == 6, out[-600:])
    tally.check(name + ": the ceiling's rows are the rows",
                [c[0].strip() for c in ceilings] == [l.strip() for l in last], f"{ceilings}")
    tally.check(name + ": every ceiling measured",
                all(float(c[1]) > 0 and float(c[2]) > 0 for c in ceilings), f"{ceilings}")


def main():
    tally = Tally()
    for tool in (PARALLEL_BENCH, DELTA_BENCH):
        if not os.access(tool, os.X_OK):
            tally.skip(os.path.basename(tool), f"{tool} is not built")
    if tally.skipped:
        return tally.finish()
    check_parallel_bench(tally)
    check_delta_bench(tally)
    return tally.finish()


if __name__ == "__main__":
    sys.exit(main())
