#!/usr/bin/env python3
"""`ptprof delta` on Arm CoreSight snapshots (../shared/testdata/opencsd), checked against an
independent count from the decoded instruction stream.

For each snapshot and Arm pattern pair, `ptprof decode --insn` lists every instruction with its
CPU and capstone's disassembly; this script runs Algorithm 1 itself over that listing (per CPU:
an opener opens, an opener while open is nested, a closer closes, a gap drops what is open) and
the intervals' instruction counts, the nested openers, the dropped intervals and the matches must
equal what `ptprof delta --format json` reports. SKIPs when the test data is absent.
"""
import collections
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from tally import Tally  # noqa: E402

PTPROF = os.environ["PTPROF"]
DATA = os.path.join(os.environ["SHARED_TESTDATA"], "opencsd")

CASES = [
    # snapshot, pair, opener regex, closer regex (on capstone's text)
    ("snapshots/TC2", "a32IrqOff,a32IrqOn", r"cpsid (i|if|ai|aif)$", r"cpsie (i|if|ai|aif)$"),
    ("snapshots/Snowball", "a32IrqOff,a32IrqOn", r"cpsid (i|if|ai|aif)$", r"cpsie (i|if|ai|aif)$"),
    ("snapshots-ete/infrastructure", "armIrqOff,armIrqOn",
     r"msr daifset, #(2|3|6|7|0xa|0xb|0xe|0xf|10|11|14|15)$",
     r"msr daifclr, #(2|3|6|7|0xa|0xb|0xe|0xf|10|11|14|15)$|msr daif, x([0-9]|[12][0-9]|30)$"),
]

LINE = re.compile(r"^cpu(\d+)\s+([0-9a-f]{16})\s+(.*?)\s*$")
GAP = re.compile(r"^(?:cpu(\d+)\s+)?\[gap:")


def independent(listing, opener, closer):
    position = collections.Counter()
    open_at = {}
    intervals, nested, dropped, opens, closes = [], 0, 0, 0, 0
    for line in listing.splitlines():
        gap = GAP.match(line)
        if gap:
            cpu = int(gap.group(1) or 0)
            if open_at.pop(cpu, None) is not None:
                dropped += 1
            continue
        m = LINE.match(line)
        if not m:
            continue
        cpu, text = int(m.group(1)), m.group(3)
        is_open, is_close = re.search(opener, text), re.search(closer, text)
        opens += bool(is_open)
        closes += bool(is_close)
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
if not os.path.isdir(DATA):
    t.skip("coresight delta", f"{DATA} is absent")
    t.finish()

for snapshot, pair, opener, closer in CASES:
    path = os.path.join(DATA, snapshot)
    if not os.path.isdir(path):
        t.skip(snapshot, "absent")
        continue
    listing = subprocess.run([PTPROF, "decode", "--insn", path], capture_output=True, text=True).stdout
    want, nested, dropped, opens, closes = independent(listing, opener, closer)
    out = subprocess.run([PTPROF, "delta", "--pair", pair, "--format", "csv", path],
                         capture_output=True, text=True)
    if out.returncode != 0:
        t.report(f"{snapshot} {pair}", out.stderr.strip())
        continue
    got = sorted(int(row.split(",")[4]) for row in out.stdout.splitlines()[1:])
    d = json.loads(subprocess.run([PTPROF, "delta", "--pair", pair, "--format", "json", path],
                                  capture_output=True, text=True).stdout)
    c = d["counts"]
    t.check(f"{snapshot} {pair}: {len(want)} intervals with the instruction counts of the listing",
            got == want and len(want) > 0, f"delta {got} vs listing {want}")
    t.check(f"{snapshot} {pair}: nested {nested}, dropped {dropped}, matches {opens}/{closes}",
            (c["nested_openers"], c["dropped_at_gap"], d["open"]["matches"], d["close"]["matches"])
            == (nested, dropped, opens, closes),
            f'delta {c["nested_openers"]}, {c["dropped_at_gap"]}, {d["open"]["matches"]}/{d["close"]["matches"]}')
t.finish()
