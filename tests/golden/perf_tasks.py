#!/usr/bin/env python3
"""Several streams, several threads: decode merges the streams by time and attributes every event
to its task, for a .ptar and for the perf.data `export --perf-data --images-dir` makes of it.

  ptar       `decode --insn --format jsonl traces/qemu/threads.ptar` (5 streams tidN): every event
             carries its stream's tid and pid; each thread's instruction sequence equals what
             `--stream tidN` alone decodes (the merge keeps each stream's order); the merge keys
             (time, else tsc, else the previous event's) never go down; no instruction is lost.
  export     the perf.data exported with --images-dir (bare-byte images) decodes with ptprof: each
             thread's instruction sequence (from ITRACE_START/COMM sideband) equals the .ptar's.
  perf       `perf script --itrace=i1i -F tid,ip` of that perf.data gives, thread for thread, the
             same instruction addresses as ptprof (skipped when perf is not installed).

Prints ok/FAIL/SKIP lines and `N passed, N failed, N skipped`.
"""
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tally import Tally  # noqa: E402

PTPROF = os.path.abspath(os.environ["PTPROF"])
ROOT = os.environ["SOURCE_ROOT"]
THREADS = os.path.join(ROOT, "traces", "qemu", "threads.ptar")
PERF = shutil.which("perf")
TALLY = Tally()


def ptprof(args):
    return subprocess.run([PTPROF, *args], capture_output=True, text=True, timeout=300)


def events(args):
    r = ptprof(["decode", "--insn", "--format", "jsonl", *args])
    if r.returncode != 0:
        return None, f"exit status {r.returncode}: {r.stderr.strip()[-300:]}"
    return [json.loads(line) for line in r.stdout.splitlines()], None


def ips_by_tid(evs):
    by_tid = collections.defaultdict(list)
    for e in evs:
        if "iclass" in e:
            by_tid[e.get("tid")].append(int(e["ip"], 16))
    return dict(by_tid)


def merge_keys_rise(evs):
    """The first place where the merge order is broken, or None (keys as docs/decode.md says)."""
    previous_of_stream = {}
    last = 0
    for i, e in enumerate(evs):
        stream = e.get("tid")
        own = e.get("time", e.get("tsc"))
        key = previous_of_stream.get(stream, 0) if own is None else max(own, previous_of_stream.get(stream, 0))
        previous_of_stream[stream] = key
        if key < last:
            return f"event #{i} (tid {stream}) has key {key} after {last}"
        last = key
    return None


def first_difference(a, b):
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return f"#{i}: {x:#x} vs {y:#x}"
    return f"lengths {len(a)} vs {len(b)}"


def check_ptar():
    evs, problem = events([THREADS])
    TALLY.report("ptar: decode of 5 streams", problem)
    if evs is None:
        return None
    streams = {}
    info = ptprof(["info", THREADS]).stdout
    for line in info.splitlines():
        parts = line.split()
        if parts and parts[0].startswith("tid") and "pid" in parts:
            streams[int(parts[parts.index("tid") + 1].rstrip(","))] = int(
                parts[parts.index("pid") + 1].rstrip(","))
    TALLY.check("ptar: info lists 5 tid streams", len(streams) == 5, info[:300])
    wrong = [e for e in evs if e.get("tid") not in streams or e.get("pid") != streams[e.get("tid")]]
    TALLY.check("ptar: every event carries its stream's pid/tid", not wrong,
                f"{len(wrong)} events, first {wrong[:1]}")
    TALLY.report("ptar: merged by time", merge_keys_rise(evs))
    merged = ips_by_tid(evs)
    total = sum(len(v) for v in merged.values())
    alone_total = 0
    for tid in sorted(streams):
        alone, problem = events(["--stream", f"tid{tid}", THREADS])
        if alone is None:
            TALLY.report(f"ptar: --stream tid{tid}", problem)
            continue
        want = ips_by_tid(alone).get(tid, [])
        got = merged.get(tid, [])
        alone_total += len(want)
        TALLY.check(f"ptar: tid{tid} in the merge equals --stream tid{tid} ({len(want)} insns)",
                    want == got and want, first_difference(got, want))
    TALLY.check(f"ptar: the merge holds every stream's instructions ({total})",
                total == alone_total, f"{total} merged, {alone_total} stream by stream")
    return merged


def perf_script_ips(data, tmp):
    env = dict(os.environ, HOME=os.path.join(tmp, "home"))
    os.makedirs(env["HOME"], exist_ok=True)
    r = subprocess.run([PERF, "--buildid-dir", os.path.join(tmp, "cache"), "script", "-f", "-i",
                        data, "--itrace=i1i", "-F", "tid,ip"], capture_output=True, text=True,
                       timeout=300, env=env)
    if r.returncode != 0:
        return None, f"perf script failed: {r.stderr.strip()[-300:]}"
    by_tid = collections.defaultdict(list)
    for line in r.stdout.splitlines():
        parts = line.split()
        if len(parts) == 2:
            by_tid[int(parts[0])].append(int(parts[1], 16))
    return dict(by_tid), None


def check_export(merged, tmp):
    data = os.path.join(tmp, "threads.perf.data")
    r = ptprof(["export", "--perf-data", data, "--images-dir", os.path.join(tmp, "images"), THREADS])
    TALLY.report("export --perf-data --images-dir", None if r.returncode == 0 else r.stderr.strip())
    if r.returncode != 0:
        return
    evs, problem = events([data])
    TALLY.report("export: ptprof decode of the perf.data", problem)
    if evs is None:
        return
    r = ptprof(["decode", "--format", "jsonl", data])
    TALLY.check("export: every bare-byte image loads (no binary reported missing)",
                "decodes as gaps" not in r.stderr, r.stderr.strip()[-300:])
    TALLY.check("export: ContextSwitch events name the threads",
                sorted(e["next_tid"] for e in evs if e.get("event") == "switch") == sorted(merged),
                str([e for e in evs if e.get("event") == "switch"][:6]))
    back = ips_by_tid(evs)
    for tid in sorted(merged):
        TALLY.check(f"export: tid{tid} decodes as from the .ptar ({len(merged[tid])} insns)",
                    back.get(tid) == merged[tid], first_difference(back.get(tid, []), merged[tid]))
    if not PERF:
        TALLY.skip("perf: per-thread instructions", "perf is not installed")
        return
    theirs, problem = perf_script_ips(data, tmp)
    TALLY.report("perf: perf script --itrace=i1i -F tid,ip", problem)
    if theirs is None:
        return
    for tid in sorted(merged):
        TALLY.check(f"perf: tid{tid} has the same instructions as ptprof ({len(back.get(tid, []))})",
                    theirs.get(tid) == back.get(tid),
                    first_difference(theirs.get(tid, []), back.get(tid, [])))


def main():
    merged = check_ptar()
    if merged:
        with tempfile.TemporaryDirectory(prefix="ptprof-perf-tasks-") as tmp:
            check_export(merged, tmp)
    TALLY.finish()


if __name__ == "__main__":
    main()
