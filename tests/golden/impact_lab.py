#!/usr/bin/env python3
"""`ptprof impact --baseline syscalls-nop.ptar --traced syscalls-function.ptar` (ftrace's `nop`
against its `function` tracer, the same workload: lab_syscalls 10), checked against a direct
count over the decoded flows.

This script reads `ptprof decode --blocks` of both traces itself: a syscall is a user block ending
in `syscall` followed by kernel blocks up to the next user block, named by the first
`__x64_sys_NAME` symbol. The code that runs only with the tracer is every kernel block whose
function (its symbol without the offset; "[no symbol]" for the ftrace trampoline, which kallsyms
does not name) never runs anywhere in the baseline. Checked, for every syscall kind in both:
- the calls on each side, A's median and the extra instructions per call (B's mean minus A's
  median) equal the direct count's;
- the instructions ptprof attributes to functions that never run in the baseline equal the direct
  count of instructions executed in those functions during that kind's syscalls (within 0.5%:
  ptprof attributes a block to the frame that executes it, the count here to the block's symbol);
- for getpid, mmap and openat: the tracer-only code explains most of the extra instructions (at
  least 80%) and ftrace's functions (function_trace_call, trace_function, ring_buffer_*) are among
  the tracer-only functions, and the summary paragraph names the numbers;
- the extra ns per call is reported for getpid, mmap and openat (these traces carry TSC packets
  only, no MTC/CYC: at that resolution most syscalls take 0 ns, so the value is not checked).
The final ioctl of syscalls-function.ptar is left out of the per-kind checks: ptprof's stack
closes it earlier than "the next user block" (see syscalls_lab.py).
"""
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from tally import Tally  # noqa: E402

PTPROF = os.environ["PTPROF"]
ROOT = os.environ["SOURCE_ROOT"]
NOP = os.path.join(ROOT, "traces", "lab", "syscalls-nop.ptar")
FUNCTION = os.path.join(ROOT, "traces", "lab", "syscalls-function.ptar")
BLOCK = re.compile(r"^([0-9a-f]{16})\.\.([0-9a-f]{16})\s+(\d+) insns\s+(\S+)\s*(?:<([^>]*)>)?\s*$")
HANDLER = re.compile(r"^__x64_sys_(\w+?)(?:\+0x[0-9a-f]+)?$")
FTRACE = ("function_trace_call", "trace_function", "ring_buffer_lock_reserve")


def run(args):
    p = subprocess.run([PTPROF] + args, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def function_of(symbol):
    return re.sub(r"\+0x[0-9a-f]+$", "", symbol) if symbol else "[no symbol]"


def read_flow(listing):
    """(every kernel function seen, [(name, kernel insns, {function: insns})] per syscall)."""
    functions, syscalls, current = set(), [], None
    for line in listing.splitlines():
        m = BLOCK.match(line)
        if not m:
            if line.startswith("[gap"):
                current = None
            continue
        first, _, insns, end, symbol = m.groups()
        if int(first, 16) < 0xffff800000000000:
            functions.add(function_of(symbol))
            if current is not None:
                syscalls.append((current[0] or "unknown", current[1], current[2]))
                current = None
            if end == "syscall":
                current = [None, 0, {}]
            continue
        fn = function_of(symbol)
        functions.add(fn)
        if current is not None:
            current[1] += int(insns)
            current[2][fn] = current[2].get(fn, 0) + int(insns)
            h = HANDLER.match(symbol or "")
            if h and current[0] is None:
                current[0] = h.group(1)
    return functions, syscalls


def median(values):
    values = sorted(values)
    return values[max(0, -(-len(values) // 2) - 1)]  # nearest rank, as ptprof


def main():
    t = Tally()
    if not (os.path.exists(NOP) and os.path.exists(FUNCTION)):
        t.skip("impact on the lab traces", "traces/lab is missing")
        t.finish()
    flows = []
    for trace in (NOP, FUNCTION):
        status, listing, err = run(["decode", "--blocks", trace])
        if status != 0:
            t.report("decode " + trace, err.strip())
            t.finish()
        flows.append(read_flow(listing))
    (functions_a, syscalls_a), (_, syscalls_b) = flows
    status, out, err = run(["impact", "--baseline", NOP, "--traced", FUNCTION, "--format", "json",
                            "--top", "100000"])
    if status != 0:
        t.report("impact", err.strip())
        t.finish()
    report = json.loads(out)
    kinds = {k["syscall"]: k for k in report["syscalls"]}
    names = sorted({n for n, _, _ in syscalls_a} & {n for n, _, _ in syscalls_b} - {"unknown"})
    t.check(f"the syscall kinds in both: {', '.join(names)}", sorted(kinds) == names,
            f"ptprof: {sorted(kinds)}")
    for name in names:
        if name == "ioctl":
            continue
        k = kinds.get(name)
        if not k:
            continue
        a = [n for s, n, _ in syscalls_a if s == name]
        b = [n for s, n, _ in syscalls_b if s == name]
        extra = sum(b) / len(b) - median(a)
        t.check(f"{name}: {len(a)} and {len(b)} calls, A's median {median(a)}, "
                f"extra {extra:+.1f} instructions per call",
                k["calls_baseline"] == len(a) and k["calls_traced"] == len(b) and
                k["insns_baseline"]["p50"] == median(a) and
                abs(k["extra_insns_per_call"]["mean"] - extra) < 1e-6,
                f"ptprof: {k['calls_baseline']}, {k['calls_traced']}, {k['insns_baseline']['p50']}, "
                f"{k['extra_insns_per_call']['mean']}")
        direct = sum(i for s, _, fns in syscalls_b if s == name
                     for fn, i in fns.items() if fn not in functions_a)
        mine = k["tracer_function_insns"]
        t.check(f"{name}: instructions in tracer-only functions {mine} = direct count {direct}",
                abs(mine - direct) <= 0.005 * max(direct, 1), f"ptprof {mine}, direct {direct}")
        if name in ("getpid", "mmap", "openat"):
            per_call = direct / len(b)
            listed = {f["name"] for f in k["tracer_functions"]}
            t.check(f"{name}: the tracer-only code ({per_call:.1f} insns/call) explains "
                    f"{100 * per_call / extra:.0f}% of the extra {extra:.1f}",
                    extra > 0 and per_call >= 0.8 * extra)
            t.check(f"{name}: ftrace's functions are tracer-only", all(f in listed for f in FTRACE),
                    f"missing {[f for f in FTRACE if f not in listed]}")
            t.check(f"{name}: extra ns per call reported ({k['extra_ns_per_call']['mean']:+.0f}; "
                    "these traces carry TSC packets only)",
                    report["timed"] and k["extra_ns_per_call"] is not None)
    summary = report["summary"]
    t.check("the summary paragraph names getpid's extra instructions",
            "getpid took" in summary and "instructions per call" in summary, summary)
    t.finish()


if __name__ == "__main__":
    main()
