#!/usr/bin/env python3
"""`ptprof stacks` and `ptprof syscalls` in parts (src/analyses/support/call_stack_parts.cc)
report exactly what they report on one thread.

With --jobs 2 and 3 and PSB segments of several sizes, each segment of a one-stream recording is
decoded on the thread that claims it and built into a call tree of its own, on stand-ins for the
frames it cannot know; the fold checks what the part guessed of them, and a part that guessed
wrong is decoded again in order. For every recording under traces/ (the emulated programs, the
kernel labs with syscalls and interrupts, per CPU and per thread), the folded stacks and the JSON
tree of `stacks` (whole, one thread, an offset range, a time range, one syscall's kernel trees) and the JSON instances with their kernel
trees and the CSV of `syscalls` must equal those of one thread byte for byte, `--verbose` must say
the stream was consumed in parts, and most parts must fold.
"""
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
TRACES = sorted(glob.glob(os.path.join(ROOT, "traces", "*", "*.ptar")))
PARTS = re.compile(r"\((\d+) consumed in parts on the decoding threads(?:, (\d+) of them again)?")
SPLITS = ((2, 4096), (3, 16384), (2, 65536))


def run(args, jobs=1, segment=None):
    cmd = [PTPROF, *args, "--jobs", str(jobs), "--verbose"]
    if segment:
        cmd += ["--psb-segment", str(segment)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    return done.returncode, done.stdout, done.stderr


def syscall_rows(path):
    """The recording's syscall instances (`syscalls --instances`), [] when it has none."""
    rc, out, _ = run(["syscalls", "--format", "json", "--instances", path])
    if rc != 0:
        return []
    try:
        rows = json.loads(out)
    except ValueError:
        return []
    rows = rows.get("instances", rows) if isinstance(rows, dict) else rows
    return [row for row in rows if isinstance(row, dict)]


def first_tid(rows):
    """A thread of the recording, from its syscalls (None for per-CPU recordings)."""
    tids = [row.get("tid", -1) for row in rows]
    tids = [tid for tid in tids if tid not in (None, -1)]
    return tids[0] if tids else None


def commonest_traced_syscall(rows):
    """The syscall with the most instances whose kernel side was traced, or None."""
    names = [row.get("name") for row in rows if row.get("kernel_traced") and row.get("name")]
    return max(sorted(set(names)), key=names.count) if names else None


def time_window(path):
    """The second eighth to the half of the first stream's time, as a --interval in ns (None when the
    recording has no nominal frequency to make its TSC ns)."""
    done = subprocess.run([PTPROF, "info", "--format", "json", path], capture_output=True, text=True)
    if done.returncode != 0:
        return None
    info = json.loads(done.stdout)
    nom_freq = info["manifest"].get("pt", {}).get("nom_freq", 0)
    streams = info.get("streams") or []
    if not nom_freq or not streams or "first_tsc" not in streams[0]:
        return None
    first, last = streams[0]["first_tsc"], streams[0]["last_tsc"]
    ns = 10.0 / nom_freq  # a TSC tick at the nominal frequency, nom_freq x 100 MHz
    return f"{(first + (last - first) / 8) * ns:.0f}ns..{(first + (last - first) / 2) * ns:.0f}ns"


def main():
    tally = Tally()
    if not TRACES:
        tally.skip("call stacks in parts", "no recordings under traces/")
        tally.finish()
    parted = redone = windows = syscall_views = 0
    for path in TRACES:
        name = os.path.relpath(path, ROOT)
        size = os.path.getsize(path)
        views = {
            "stacks folded": ["stacks", "--format", "folded"],
            "stacks json": ["stacks", "--format", "json"],
            "stacks offset range": ["stacks", "--format", "folded",
                                    "--interval", f"{size // 8}..{size // 2}"],
            "syscalls instances": ["syscalls", "--format", "json", "--instances", "--tree"],
            "syscalls csv": ["syscalls", "--format", "csv"],
        }
        window = time_window(path)
        if window:
            views["stacks time range"] = ["stacks", "--format", "folded", "--interval", window]
        rows = syscall_rows(path)
        tid = first_tid(rows)
        syscall = commonest_traced_syscall(rows)
        if syscall:
            views["stacks one syscall"] = ["stacks", "--format", "json", "--syscall", syscall]
            syscall_views += 1
        if tid is not None:
            views["stacks one thread"] = ["stacks", "--format", "folded", "--tid", str(tid)]
        for label, args in views.items():
            one = run(args + [path])
            if label == "stacks time range" and one[0] == 0 and one[1].strip():
                windows += 1  # (a window of a short or multi-stream recording may hold nothing)
            for jobs, segment in SPLITS:
                many = run(args + [path], jobs, segment)
                tally.same_run(f"{name} {label}, {jobs} threads, segments of {segment}", one, many)
                for parts, again in PARTS.findall(many[2]):
                    parted += int(parts)
                    redone += int(again or 0)
    print(f"{parted} parts, {redone} of them decoded again")
    tally.check("time ranges that hold a tree were compared", windows > 5, f"only {windows}")
    tally.check("one syscall's trees were compared", syscall_views >= 5, f"only {syscall_views}")
    tally.check("segments were consumed in parts", parted > 300, f"only {parted}")
    # The kernel labs' parts begin inside syscalls or return past the start of a per-CPU stack
    # more often; the user recordings' parts nearly all fold.
    tally.check("most parts were folded", redone * 2 < parted, f"{redone} of {parted} decoded again")
    tally.finish()


if __name__ == "__main__":
    main()
