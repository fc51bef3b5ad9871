#!/usr/bin/env python3
"""The exact check of `ptprof delta` (docs/delta.md) on tools/workloads/delta_markers.c.

The program (no libc) runs `pause ; mov n, %rcx ; n x (dec ; jnz) ; lfence` for n = 10 (5 times),
100 (3), 1000 (2), 5000 (1) and once with a second `pause` inside a 50-turn loop. With the pair
pause -> lfence, the instruction-count delta of an interval is 2n + 2, so the histogram must hold
exactly 22 x5, 202 x3, 2002 x2, 10002 x1 and 103 x1 (the nested one), with one nested opener.
traces/delta/markers.ptar was recorded with `ptprof record --backend qemu --mtc-period 0
--cyc-threshold 1 --cycles-per-insn 3`: the cycle model gives 3 cycles per instruction and the
emulated TSC runs at the core clock (2 GHz, nom-freq 20), so each interval lasts 1.5 ns per
instruction; the trace's timing packets (an MTC every 2 CTC ticks) place each block's time within
2 ns, so every interval's time is 1.5 ns x its instructions within 2 ns, and the time histogram
has the same bin counts as the instruction histogram. The text output is diffed against
traces/delta/expected/delta-markers.txt; `decode --interval` must print exactly the blocks of
the interval. When qemu-x86_64 and a C compiler are there, the workload is compiled and recorded
afresh and must give the same counts (SKIP otherwise).
"""
import csv
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(__file__))
from tally import Tally  # noqa: E402

PTPROF = os.environ["PTPROF"]
ROOT = os.environ["SOURCE_ROOT"]
TRACE = os.path.join(ROOT, "traces", "delta", "markers.ptar")
EXPECTED = os.path.join(ROOT, "traces", "delta", "expected", "delta-markers.txt")
PAIR = ["--pattern", "open=pause", "--pattern", "close=lfence", "--pair", "open,close"]
EXACT = {22: 5, 103: 1, 202: 3, 2002: 2, 10002: 1}
NS_PER_INSN = 1.5
TIME_TOLERANCE_NS = 2.0

t = Tally()


def delta(trace, *extra):
    return subprocess.run([PTPROF, "delta", *PAIR, trace, *extra], capture_output=True, text=True)


def check_profile(name, trace):
    out = delta(trace, "--format", "json")
    if out.returncode != 0:
        t.report(name, out.stderr.strip())
        return
    d = json.loads(out.stdout)
    values = {int(v["value"]): v["count"] for v in d["instructions"]["values"]}
    t.check(f"{name}: instruction-count deltas exactly {EXACT}", values == EXACT, str(values))
    c = d["counts"]
    t.check(f"{name}: 12 intervals, 1 nested opener, none dropped or left open",
            (c["intervals"], c["nested_openers"], c["dropped_at_gap"], c["open_at_end"],
             c["closers_without_opener"], c["gaps"]) == (12, 1, 0, 0, 0, 0), str(c))
    t.check(f"{name}: 13 pause and 12 lfence matches",
            (d["open"]["matches"], d["close"]["matches"]) == (13, 12),
            f'{d["open"]["matches"]}, {d["close"]["matches"]}')
    t.check(f"{name}: time in ns", d["time_unit"] == "ns", d["time_unit"])
    rows = list(csv.DictReader(io.StringIO(delta(trace, "--format", "csv").stdout)))
    off = [(r["id"], r["instructions"], r["time_ns"]) for r in rows
           if abs(float(r["time_ns"]) - NS_PER_INSN * int(r["instructions"])) > TIME_TOLERANCE_NS]
    t.check(f"{name}: every interval lasts 1.5 ns per instruction (cycle model) within 2 ns",
            len(rows) == 12 and not off, f"{len(rows)} rows, off: {off}")
    bins_i = [b["count"] for b in d["instructions"]["bins"]]
    bins_t = [b["count"] for b in d["time"]["bins"]]
    t.check(f"{name}: time histogram bins == instruction histogram bins", bins_i == bins_t,
            f"{bins_i} vs {bins_t}")


check_profile("stored trace", TRACE)

# Golden text output (the input named as in the expected file, relative to the source root).
out = subprocess.run([PTPROF, "delta", *PAIR, os.path.join("traces", "delta", "markers.ptar")],
                     capture_output=True, text=True, cwd=ROOT)
expected = open(EXPECTED).read()
t.check("text output equals traces/delta/expected/delta-markers.txt", out.stdout == expected,
        "differs:\n" + "".join(f"  got: {l}\n" for l in out.stdout.splitlines()[:5]))

# log2 scale: octaves.
d = json.loads(delta(TRACE, "--scale", "log2", "--format", "json").stdout)
octaves = {int(b["low"]): b["count"] for b in d["instructions"]["bins"] if b["count"]}
t.check("log2 bins: [16,32) 5, [64,128) 1, [128,256) 3, [1024,2048) 2, [8192,16384) 1",
        octaves == {16: 5, 64: 1, 128: 3, 1024: 2, 8192: 1}, str(octaves))
t.check("percentiles p50 103, p90 2002, p99 10002, max 10002",
        [d["instructions"]["percentiles"][k] for k in ("p50", "p90", "p99", "max")] ==
        [103, 2002, 10002, 10002], str(d["instructions"]["percentiles"]))
t.check("--top 3: the longest first", [i["instructions"] for i in
        json.loads(delta(TRACE, "--top", "3", "--format", "json").stdout)["top"]] ==
        [10002, 2002, 2002])

# Per thread: one thread, the same intervals.
d = json.loads(delta(TRACE, "--per-thread", "--format", "json").stdout)
t.check("--per-thread: the same 12 intervals", d["counts"]["intervals"] == 12)

# The SVG plot: well-formed, two panels with bars, labelled axes.
with tempfile.TemporaryDirectory() as tmp:
    svg_path = os.path.join(tmp, "d.svg")
    delta(TRACE, "--svg", svg_path)
    try:
        root = ET.parse(svg_path).getroot()
        ns = "{http://www.w3.org/2000/svg}"
        texts = [e.text for e in root.iter(ns + "text")]
        bars = [e for e in root.iter(ns + "rect") if e.get("x")]
        t.check("--svg: both histograms with bars and axis labels",
                "instruction-count delta" in texts and "time delta" in texts and len(bars) == 40
                and "instructions between the matches" in texts
                and "time between the matches (ns)" in texts, f"{len(bars)} bars, {texts[:6]}")
    except (ET.ParseError, FileNotFoundError) as e:
        t.report("--svg: both histograms with bars and axis labels", str(e))

# decode --interval: the blocks from the opener's to the closer's, nothing else.
out = subprocess.run([PTPROF, "decode", "--interval", "12", *PAIR, "--format", "jsonl", TRACE],
                     capture_output=True, text=True)
blocks = [json.loads(l) for l in out.stdout.splitlines() if '"insns"' in l]
# The first block holds the pause and the first loop turn, 49 more turns follow, the last block
# holds the second pause and the lfence (and the exit after it: blocks are shown whole).
t.check("decode --interval 12: 1 + 49 + 1 blocks from the nested interval's pause to its lfence",
        out.returncode == 0 and len(blocks) == 51 and blocks[0]["first_ip"] == "0x40103a"
        and int(blocks[-1]["first_ip"], 16) <= 0x40104a <= int(blocks[-1]["last_ip"], 16)
        and sum(b["insns"] for b in blocks[:-1]) == 102,
        out.stderr.strip() or f"{len(blocks)} blocks")

# A fresh recording of the workload, when qemu and a compiler are there.
cc = shutil.which("cc") or shutil.which("gcc")
if not shutil.which("qemu-x86_64") or not cc:
    t.skip("fresh recording", "qemu-x86_64 or cc not installed")
else:
    with tempfile.TemporaryDirectory() as tmp:
        prog = os.path.join(tmp, "delta_markers")
        archive = os.path.join(tmp, "m.ptar")
        build = subprocess.run([cc, "-O1", "-nostdlib", "-static", "-fno-stack-protector",
                                "-fno-pie", "-no-pie", "-o", prog,
                                os.path.join(ROOT, "tools", "workloads", "delta_markers.c")],
                               capture_output=True, text=True)
        rec = subprocess.run([PTPROF, "record", "-q", "-o", archive, "--mtc-period", "0",
                              "--cyc-threshold", "1", "--cycles-per-insn", "3", "--", prog],
                             capture_output=True, text=True) if build.returncode == 0 else build
        if rec.returncode != 0:
            t.report("fresh recording", rec.stderr.strip())
        else:
            check_profile("fresh recording", archive)

t.finish()
