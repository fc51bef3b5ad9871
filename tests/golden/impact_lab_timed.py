#!/usr/bin/env python3
"""`ptprof syscalls` and `ptprof impact` in nanoseconds, on the cycle-accurate kernel lab traces.

traces/lab/syscalls-{nop,function}-cyc.ptar were recorded with CYC after every packet and MTC
(tools/lab/make_traces.sh), so every block carries its time. The lab's cycle model runs one cycle
per instruction at the nominal frequency the archive records (nom-freq 20: 2 GHz, 0.5 ns per
instruction), so a syscall's latency must be its instructions times 0.5 ns, within the few user
instructions that return from it, and the extra ns per call the tracer costs must be its extra
instructions times 0.5 ns. Checked for getpid, mmap and openat; the counts equal the rounds (10).
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from tally import Tally  # noqa: E402

PTPROF = os.environ["PTPROF"]
ROOT = os.environ["SOURCE_ROOT"]
NOP = os.path.join(ROOT, "traces", "lab", "syscalls-nop-cyc.ptar")
FUNCTION = os.path.join(ROOT, "traces", "lab", "syscalls-function-cyc.ptar")
NS_PER_INSN = 0.5
t = Tally()


def run_json(args):
    p = subprocess.run([PTPROF] + args + ["--format", "json"], capture_output=True, text=True)
    if p.returncode != 0:
        return None, p.stderr.strip()
    return json.loads(p.stdout), ""


report, err = run_json(["impact", "--baseline", NOP, "--traced", FUNCTION])
t.check("impact runs on the timed lab traces", report is not None, err)
if report is not None:
    kinds = {s["syscall"]: s for s in report["syscalls"]}
    for name in ("getpid", "mmap", "openat"):
        s = kinds.get(name)
        if s is None:
            t.check(f"{name}: present in both", False, str(sorted(kinds)))
            continue
        t.check(f"{name}: 10 calls in each", s["calls_baseline"] == 10 and s["calls_traced"] == 10,
                f"{s['calls_baseline']}/{s['calls_traced']}")
        lat, insns = s["latency_ns_baseline"]["p50"], s["insns_baseline"]["p50"]
        t.check(f"{name}: baseline latency p50 = kernel instructions x 0.5 ns (+- 20 ns)",
                abs(lat - insns * NS_PER_INSN) <= 20, f"{lat} ns for {insns} instructions")
        extra_ns, extra_insns = s["extra_ns_per_call"]["mean"], s["extra_insns_per_call"]["mean"]
        print(f"info  {name}: +{extra_insns:.1f} instructions, +{extra_ns:.1f} ns per call")
        t.check(f"{name}: extra ns per call = extra instructions x 0.5 ns (+- 2%)",
                extra_ns > 0 and abs(extra_ns - extra_insns * NS_PER_INSN)
                <= 0.02 * extra_insns * NS_PER_INSN, f"{extra_ns} ns for {extra_insns} instructions")
        share = sum(f["share_of_extra"] for f in s.get("tracer_paths", []))
        t.check(f"{name}: the extra instructions lie on tracer-only paths (>= 80%)", share >= 0.8,
                f"{share:.2f}")

summary, err = run_json(["syscalls", NOP, "--syscall", "getpid", "--instances"])
t.check("syscalls --instances runs", summary is not None, err)
if summary is not None:
    text = json.dumps(summary)
    t.check("syscalls reports non-zero latencies", '"latency_ns": 0' not in text
            and "latency_ns" in text, text[:200])
t.finish()
