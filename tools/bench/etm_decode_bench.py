#!/usr/bin/env python3
"""ETM decode throughput: ptprof beside trc_pkt_lister on the same snapshots, in one invocation.

For each snapshot, times (best of --repeat runs, wall clock):
  * `ptprof info --format json SNAP`: OpenCSD decode into the model, events counted, no output;
  * `ptprof decode --format jsonl SNAP > /dev/null`: decode plus the JSONL writer;
  * `trc_pkt_lister -ss_dir SNAP -decode_only -logfilename FILE`: OpenCSD's own lister.
Prints trace MB/s and M instructions/s for each and the ratios ptprof/trc_pkt_lister. Process
start-up is included in every figure (the snapshots are small), so the ratios are what a user sees.

With --parallel N, it then times the parallel decode (decoders/etm/etm_parallel_decode.cc) on
larger buffers made by repeating a real buffer N times in a copy of the snapshot (TC2 and
juno-uname-001: frame-formatted, several sources): `decode --format jsonl --jobs 1` beside
`--jobs 2`, best of --repeat, with peak RSS and what --verbose says of the segments, and checks
that both print the same bytes; on TC2 the same for `delta --pair a32IrqOff,a32IrqOn`. Where one copy ends and the next begins a packet is cut: each seam
looks like damage to the decoder, and the parallel decode refuses to join pieces near one. "TC2
damaged" is TC2 repeated in 256 KiB pieces with damage at the middle cut: the pieces either side of
it do not join, and the decode joins again after them (decoders/etm/etm_stretch.h).
Usage: tools/bench/etm_decode_bench.py [--ptprof build/ptprof] [--repeat 5] [--parallel N] [SNAPSHOT_DIR...]
"""
import hashlib
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


def timed_decode(ptprof, snap, jobs, repeat, command=("decode", "--format", "jsonl")):
    """Best wall time, peak RSS in MiB, the output's SHA-256 and what --verbose said of the
    segments, of `COMMAND --jobs JOBS` (by default `decode --format jsonl`). The output goes to a
    file beside the snapshot, read after the clock stops: a pipe read by this script would take
    CPU from the decode's threads on a small machine."""
    best, rss, digest, how = None, 0.0, None, ""
    out_path = snap.rstrip("/") + ".out"
    for _ in range(repeat):
        cmd = ["/usr/bin/time", "-f", "%M", ptprof, *command, "--verbose", "--jobs", str(jobs), snap]
        with open(out_path, "wb") as out:
            start = time.perf_counter()
            run = subprocess.run(cmd, stdout=out, stderr=subprocess.PIPE, check=True)
            elapsed = time.perf_counter() - start
        best = elapsed if best is None else min(best, elapsed)
        err = run.stderr.decode().strip().splitlines()
        rss = max(rss, int(err[-1]) / 1024)
        with open(out_path, "rb") as out:
            digest = hashlib.file_digest(out, "sha256").hexdigest()
        how = next((line.split(": ")[-1] for line in err if "decoded in" in line), "")
    os.remove(out_path)
    return best, rss, digest, how


def repeated(one, copies):
    return one * copies


def damaged_at_one_cut(one, copies):
    """`one` repeated about `copies` times in pieces of 256 KiB (the default --psb-segment), the
    middle piece starting with a copy cut short (8000 bytes) behind 9600 bytes of other frames:
    the pieces either side of that cut do not join (etm_stretch.h)."""
    seam = one[8000:17600] + one[:8000]
    per_piece = max(1, (256 << 10) // len(one))
    pieces = max(2, copies // per_piece)
    return b"".join(((seam if k == pieces // 2 else b"") + one * per_piece)[:256 << 10]
                    for k in range(pieces))


def parallel_rows(ptprof, data, copies, repeat, tmp):
    print(f"\nparallel decode, buffers repeated {copies} times: decode --format jsonl "
          f"(and TC2's delta --pair a32IrqOff,a32IrqOn)")
    print(f"{'snapshot':<18} {'MB':>6} | {'jobs 1 s':>8} {'MiB':>6} | {'jobs 2 s':>8} {'MiB':>6} | "
          f"{'2 over 1':>8}  same output")
    for label, name, buffer, build, pair in (
            ("TC2", "TC2", "cstrace.bin", repeated, "a32IrqOff,a32IrqOn"),
            ("TC2 damaged", "TC2", "cstrace.bin", damaged_at_one_cut, "a32IrqOff,a32IrqOn"),
            ("juno-uname-001", "juno-uname-001", "uname_trace.bin", repeated, None)):
        src = os.path.join(data, "snapshots", name)
        if not os.path.isdir(src):
            print(f"{name}: absent, skipped")
            continue
        dst = os.path.join(tmp, label.replace(" ", "-"))
        shutil.copytree(src, dst)
        with open(os.path.join(src, buffer), "rb") as f:
            one = f.read()
        os.chmod(dst, 0o755)
        path = os.path.join(dst, buffer)
        os.chmod(path, 0o644)
        content = build(one, copies)
        with open(path, "wb") as f:
            f.write(content)
        mb = len(content) / 1e6
        rows = [(label, ("decode", "--format", "jsonl"))]
        if pair:
            rows.append((f"  delta", ("delta", "--pair", pair)))
        for label, command in rows:
            t1, m1, d1, _ = timed_decode(ptprof, dst, 1, repeat, command)
            t2, m2, d2, how = timed_decode(ptprof, dst, 2, repeat, command)
            print(f"{label:<18} {mb:6.2f} | {t1:8.2f} {m1:6.1f} | {t2:8.2f} {m2:6.1f} | "
                  f"{t1 / t2:7.2f}x  {'yes' if d1 == d2 else 'NO'}  ({how})")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.normpath(os.path.join(here, "..", ".."))
    ap = argparse.ArgumentParser()
    ap.add_argument("--ptprof", default=os.path.join(root, "build", "ptprof"))
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--parallel", type=int, default=0, metavar="N",
                    help="also time the parallel decode on buffers repeated N times")
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
        if args.parallel:
            parallel_rows(args.ptprof, data, args.parallel, args.repeat, tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
