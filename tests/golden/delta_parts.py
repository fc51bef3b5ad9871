#!/usr/bin/env python3
"""`ptprof delta` in parts (decoders/pt/parted_flow.h, src/analyses/delta/delta_part.h) reports
exactly what it reports on one thread.

With --jobs 2 and 3 and short PSB segments, every segment of a one-stream recording is decoded on
the thread that claims it and profiled there, in a part of the profile that Fold puts together
in stream order. For every recording under traces/ (the emulated programs, the kernel labs with
their real cli/sti/pushf/popf, per CPU and per thread) and three pairs (superCLI,superSTI; call
to ret, frequent, with every interval in the CSV; and one pattern for both ends, which alternates
opening and closing), the CSV and the JSON report must equal those of one thread byte for byte,
and `--verbose` must say the stream was consumed in parts. The CSV on one thread must also equal
the one made on libipt's block decoder, whose batches carry no TNT runs.
"""
import glob
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from tally import Tally  # noqa: E402

PTPROF = os.environ["PTPROF"]
ROOT = os.environ["SOURCE_ROOT"]
TRACES = sorted(glob.glob(os.path.join(ROOT, "traces", "*", "*.ptar")))
PAIRS = {
    "superCLI,superSTI": ["--pair", "superCLI,superSTI"],
    "call,ret": ["--pattern", "C=call*", "--pattern", "R=ret*", "--pair", "C,R"],
    "call,call": ["--pattern", "C=call*", "--pair", "C,C"],
}
PARTS = re.compile(r"\((\d+) consumed in parts on the decoding threads\)")


def delta(path, pair, fmt, jobs, segment=None, per_thread=False, engine="fast"):
    cmd = [PTPROF, "delta", *PAIRS[pair], "--format", fmt, "--jobs", str(jobs), "--verbose",
           "--engine", engine]
    if segment:
        cmd += ["--psb-segment", str(segment)]
    if per_thread:
        cmd.append("--per-thread")
    run = subprocess.run(cmd + [path], capture_output=True, text=True)
    return run.returncode, run.stdout, run.stderr


def main():
    tally = Tally()
    if not TRACES:
        tally.skip("delta in parts", "no recordings under traces/")
        tally.finish()
    parted = 0
    for path in TRACES:
        name = os.path.relpath(path, ROOT)
        for pair in PAIRS:
            for per_thread in (False, True):
                for fmt in ("csv", "json"):
                    label = f"{name} {pair}{' per thread' if per_thread else ''} {fmt}"
                    one = delta(path, pair, fmt, 1, per_thread=per_thread)
                    if fmt == "csv":
                        # The fast engine's batches say which blocks are TNT runs, which the
                        # profile works out once per run (run_memo.h); libipt's do not.
                        blocks = delta(path, pair, fmt, 1, per_thread=per_thread, engine="libipt")
                        tally.check(f"{label}: the same on libipt's blocks",
                                    blocks[:2] == one[:2], blocks[2][-300:])
                    for jobs, segment in ((2, 4096), (3, 2048)):
                        many = delta(path, pair, fmt, jobs, segment, per_thread)
                        tally.same_run(f"{label}, {jobs} threads", one, many)
                        parted += sum(int(n) for n in PARTS.findall(many[2]))
    # Recordings whose sideband names the tasks are decoded in one piece; the others in parts.
    tally.check("segments were consumed in parts", parted > 100, f"only {parted}")
    tally.finish()


if __name__ == "__main__":
    main()
