#!/usr/bin/env python3
"""Call trees of user programs recorded with the emulated recorder agree with valgrind's callgrind.

tools/workloads/recursion.c (built as workload_recursion: recursion, calls through a table, a
qsort callback) is recorded twice with `ptprof record --backend qemu`, with arguments 12 and 15,
and run twice under `valgrind --tool=callgrind` with the same arguments. `ptprof impact
--baseline N12 --traced N15 --format json` lists every function's calls in both recordings (the
frames ptprof's shadow call stack entered); for each of the program's own functions (main, fib,
twice, square, negate, compare) the calls must equal callgrind's call counts of that run, and the
extra calls must be fib's alone (fib(15) makes 1973 calls, fib(12) 465). SKIP without qemu-x86_64
or valgrind (tools/setup.sh installs both).
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
BUILD = os.path.dirname(PTPROF)
WORKLOAD = os.path.join(BUILD, "src", "record", "workload_recursion")
FUNCTIONS = ["main", "fib", "twice", "square", "negate", "compare"]


def callgrind_calls(out_file):
    """{function name: calls} from a callgrind output file (name compression resolved)."""
    names, calls, target = {}, {}, None
    for line in open(out_file, errors="replace"):
        m = re.match(r"^(c?fn)=\((\d+)\)(?: (.*))?$", line.rstrip("\n"))
        if m:
            if m.group(3) is not None:
                names[m.group(2)] = m.group(3)
            if m.group(1) == "cfn":
                # callgrind names recursion levels fib'2, fib'3, ...: all are calls of fib
                target = re.sub(r"'\d+$", "", names.get(m.group(2), "")) or None
            continue
        m = re.match(r"^calls=(\d+) ", line)
        if m and target:
            calls[target] = calls.get(target, 0) + int(m.group(1))
    return calls


def main():
    t = Tally()
    missing = [tool for tool in ("qemu-x86_64", "valgrind") if not shutil.which(tool)]
    if missing or not os.path.exists(WORKLOAD):
        t.skip("call counts against callgrind",
               f"{', '.join(missing) or WORKLOAD} missing (tools/setup.sh)")
        t.finish()
    with tempfile.TemporaryDirectory() as tmp:
        runs = {}
        for n in ("12", "15"):
            ptar = os.path.join(tmp, f"recursion-{n}.ptar")
            p = subprocess.run([PTPROF, "record", "--backend", "qemu", "-q", "-o", ptar, "--",
                                WORKLOAD, n], capture_output=True, text=True)
            if p.returncode != 0:
                t.report(f"record recursion {n}", p.stderr.strip())
                t.finish()
            out = os.path.join(tmp, f"callgrind-{n}.out")
            p = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                                WORKLOAD, n], capture_output=True, text=True)
            if p.returncode != 0:
                t.report(f"callgrind recursion {n}", p.stderr.strip()[-300:])
                t.finish()
            runs[n] = (ptar, callgrind_calls(out))
        p = subprocess.run([PTPROF, "impact", "--baseline", runs["12"][0], "--traced", runs["15"][0],
                            "--format", "json", "--top", "1000000"], capture_output=True, text=True)
        if p.returncode != 0:
            t.report("impact", p.stderr.strip())
            t.finish()
        report = json.loads(p.stdout)
        functions = {f["name"]: f for f in report["functions"]}
        for n, side in (("12", "calls_baseline"), ("15", "calls_traced")):
            expected = runs[n][1]
            for name in FUNCTIONS:
                got = functions.get(name, {}).get(side)
                t.check(f"recursion {n}: {name} called {expected.get(name)} times (callgrind), "
                        f"ptprof {got}", got is not None and got == expected.get(name))
        changed = sorted(f["name"] for f in report["functions"]
                         if f["name"] in FUNCTIONS and f["calls_baseline"] != f["calls_traced"])
        t.check("only fib's calls differ between the two runs (465 -> 1973)",
                changed == ["fib"] and functions["fib"]["calls_baseline"] == 465 and
                functions["fib"]["calls_traced"] == 1973, str(changed))
        t.check("main entered once in each run",
                functions["main"]["calls_baseline"] == 1 and functions["main"]["calls_traced"] == 1)
    t.finish()


if __name__ == "__main__":
    main()
