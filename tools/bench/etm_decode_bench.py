#!/usr/bin/env python3
"""ETM decode throughput: ptprof beside trc_pkt_lister on the same snapshots, in one invocation.

For each snapshot, times (best of --repeat runs, wall clock):
  * `ptprof info --format json SNAP`: OpenCSD decode into the model, events counted, no output;
  * `ptprof decode --format jsonl SNAP > /dev/null`: decode plus the JSONL writer;
  * `trc_pkt_lister -ss_dir SNAP -decode_only -logfilename FILE`: OpenCSD's own lister.
Prints trace MB/s and M instructions/s for each and the ratios ptprof/trc_pkt_lister. Process
start-up is included in every figure (the snapshots are small), so the ratios are what a user sees.
Usage: tools/bench/etm_decode_bench.py [--ptprof build/ptprof] [--repeat 5] [SNAPSHOT_DIR...]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

DEFAULT = ["snapshots/juno-uname-002", "snapshots/TC2", "snapshots-ete/001-ack_test",
           "snapshots-ete/tme_test", "snapshots-ete/trace_file_vmid"]


def best_time(cmd, repeat, stdout=subprocess.DEVNULL, cwd=None):
    best = None
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(cmd, stdout=stdout, stderr=subprocess.DEVNULL, check=True, cwd=cwd)
        elapsed = time.perf_counter() - start
        best = elapsed if best is None else min(best, elapsed)
    return best


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.normpath(os.path.join(here, "..", ".."))
    ap = argparse.ArgumentParser()
    ap.add_argument("--ptprof", default=os.path.join(root, "build", "ptprof"))
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("snapshots", nargs="*")
    args = ap.parse_args()
    data = os.path.join(root, "..", "shared", "testdata", "opencsd")
    snaps = args.snapshots or [os.path.join(data, s) for s in DEFAULT]
    lister = shutil.which("trc_pkt_lister")
    if not lister:
        print("trc_pkt_lister is not installed (Debian libopencsd-bin): no reference to compare with")
        return 1
    print(f"{'snapshot':<18} {'MB':>6} {'M insn':>7} | {'info MB/s':>9} {'Minsn/s':>7} | "
          f"{'jsonl MB/s':>10} {'Minsn/s':>7} | {'lister MB/s':>11} {'Minsn/s':>7} | "
          f"{'info/lister':>11} {'jsonl/lister':>12}")
    with tempfile.TemporaryDirectory() as tmp:
        for snap in snaps:
            if not os.path.isdir(snap):
                print(f"{os.path.basename(snap)}: absent, skipped")
                continue
            info = json.loads(subprocess.run([args.ptprof, "info", "--format", "json", snap],
                                             capture_output=True, text=True, check=True).stdout)
            mb = info["bytes"] / 1e6
            minsn = info["instructions"] / 1e6
            t_info = best_time([args.ptprof, "info", "--format", "json", snap], args.repeat)
            t_jsonl = best_time([args.ptprof, "decode", "--format", "jsonl", snap], args.repeat)
            log = os.path.join(tmp, "lister.ppl")
            t_lister = best_time([lister, "-ss_dir", snap, "-decode_only", "-logfilename", log],
                                 args.repeat, cwd=tmp)
            print(f"{os.path.basename(snap):<18} {mb:6.3f} {minsn:7.3f} | {mb / t_info:9.2f} "
                  f"{minsn / t_info:7.2f} | {mb / t_jsonl:10.2f} {minsn / t_jsonl:7.2f} | "
                  f"{mb / t_lister:11.2f} {minsn / t_lister:7.2f} | {t_lister / t_info:11.2f} "
                  f"{t_lister / t_jsonl:12.2f}")
    print("ratios > 1: ptprof is faster than trc_pkt_lister -decode_only on that snapshot")
    return 0


if __name__ == "__main__":
    sys.exit(main())
