#!/usr/bin/env python3
"""`ptprof delta --pair superCLI,superSTI` on kernel lab traces, checked against an independent
count from the decoded instruction stream.

traces/delta/lab-syscalls.ptar is `ptprof record --backend qemu-system --mtc-period 3
--cyc-threshold 1 --guest-tracer nop -- lab_syscalls 10` (the lab kernel, docs/record.md): the
kernel's own cli/sti/pushf/popf as executed under QEMU. Every trace in traces/lab/ is checked too.
`ptprof decode --insn` lists every instruction; this script runs Algorithm 1 itself over that
listing (per CPU: superCLI ends at every cli, superSTI at every sti and at a popf right after a
push of a 64-bit register; an opener while open is nested; a gap drops what is open) and the
intervals' instruction counts, nested openers, dropped intervals and matches must equal what
`ptprof delta` reports. Every interval has a time in ns; on our trace (cycle-accurate) they are
not zero.
"""
import collections
import glob
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from tally import Tally  # noqa: E402

PTPROF = os.environ["PTPROF"]
ROOT = os.environ["SOURCE_ROOT"]
TRACES = [os.path.join(ROOT, "traces", "delta", "lab-syscalls.ptar")] + \
    sorted(glob.glob(os.path.join(ROOT, "traces", "lab", "*.ptar")))

LINE = re.compile(r"^(?:cpu(\d+)\s+)?([0-9a-f]{16})\s+(\S+)\s*([^<]*?)\s*(?:<.*>)?$")
GAP = re.compile(r"^(?:cpu(\d+)\s+)?\[gap:")
R64 = re.compile(r"^(r[a-z]{2}|r\d+)$")


def independent(listing):
    position = collections.Counter()
    open_at, previous = {}, {}
    intervals, nested, dropped, opens, closes = [], 0, 0, 0, 0
    for line in listing.splitlines():
        gap = GAP.match(line)
        if gap:
            cpu = int(gap.group(1) or 0)
            previous.pop(cpu, None)
            if open_at.pop(cpu, None) is not None:
                dropped += 1
            continue
        m = LINE.match(line)
        if not m:
            continue
        cpu, mnemonic, operands = int(m.group(1) or 0), m.group(3), m.group(4)
        is_open = mnemonic == "cli"
        push = previous.get(cpu)
        is_close = mnemonic == "sti" or (mnemonic.startswith("popf") and push is not None
                                         and push[0] == "push" and R64.match(push[1]))
        previous[cpu] = (mnemonic, operands)
        opens += is_open
        closes += is_close
        if is_close and cpu in open_at:
            intervals.append(position[cpu] - open_at.pop(cpu))
        elif is_open:
            if cpu in open_at:
                nested += 1
            else:
                open_at[cpu] = position[cpu]
        position[cpu] += 1
    return sorted(intervals), nested, dropped, opens, closes


t = Tally()
for trace in TRACES:
    name = os.path.relpath(trace, ROOT)
    if not os.path.exists(trace):
        t.skip(name, "absent")
        continue
    listing = subprocess.run([PTPROF, "decode", "--insn", trace], capture_output=True, text=True).stdout
    want, nested, dropped, opens, closes = independent(listing)
    out = subprocess.run([PTPROF, "delta", "--pair", "superCLI,superSTI", "--format", "csv", trace],
                         capture_output=True, text=True)
    if out.returncode != 0:
        t.report(name, out.stderr.strip())
        continue
    rows = out.stdout.splitlines()[1:]
    got = sorted(int(row.split(",")[4]) for row in rows)
    d = json.loads(subprocess.run([PTPROF, "delta", "--pair", "superCLI,superSTI", "--format",
                                   "json", trace], capture_output=True, text=True).stdout)
    c = d["counts"]
    t.check(f"{name}: {len(want)} interrupts-off intervals with the instruction counts of the listing",
            got == want and len(want) > 0, f"delta {len(got)} vs listing {len(want)}")
    t.check(f"{name}: nested {nested}, dropped {dropped}, superCLI {opens}, superSTI {closes}",
            (c["nested_openers"], c["dropped_at_gap"], d["open"]["matches"], d["close"]["matches"])
            == (nested, dropped, opens, closes),
            f'delta {c["nested_openers"]}, {c["dropped_at_gap"]}, {d["open"]["matches"]}, {d["close"]["matches"]}')
    # Only a trace with cycle-accurate timing (ours: MTC and CYC) resolves intervals this short;
    # without it most of them fall between two timing packets and last 0 ns.
    timed = name.endswith("lab-syscalls.ptar")
    t.check(f"{name}: time in ns for every interval" + (", not all zero" if timed else ""),
            d["time_unit"] == "ns" and d["time"]["count"] == c["intervals"]
            and (not timed or d["time"]["percentiles"]["p90"] > 0), str(d["time"].get("percentiles")))
t.finish()
