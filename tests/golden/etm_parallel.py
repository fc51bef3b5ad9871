#!/usr/bin/env python3
"""Differential test of the parallel CoreSight decode (decoders/etm/etm_parallel_decode.cc).

`ptprof decode` of every CoreSight snapshot in ../shared/testdata/opencsd and of simpleperf's
cs_etm perf.data must print byte-identical JSONL (and identical --insn output for a few) on one
thread and on two with small segments (many cuts), whether the segments join or the decode falls
back to one piece, and on copies of juno-uname-001's buffer with bytes flipped (decoder errors,
resets, lost sync). It also checks, from `--verbose`, that buffers were cut and that segments of
real multi-source ETMv4/PTM buffers did join (otherwise the test would prove nothing).

The writers take their stream in parts (src/model/parted_sink.h), so these decodes go through
EtmDecoder::DecodeInParts, `--insn` too (decoders/etm/insn_expansion.h), in JSONL and in text
(disassembled on each thread). The test
pieces are small, so most heads reach their cut and few parts are folded; TC2's buffer repeated 32
times (1 MiB, 256 KiB pieces) folds some, in `decode` and in `delta --pair
a32IrqOff,a32IrqOn` (the delta profiler takes parts too), which must print the same report on one
thread and on two. The same 2 MiB with two copies cut short near the cuts at 0x80000 and 0xc0000
must join again after them (etm_stretch.h), in `decode` and in `decode --insn`. juno-uname-001's
buffer repeated 16 times, whose joins are given up, must print the same with the rest of it
consumed in parts on a second thread (src/model/part_pipe.h).
"""
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

PTPROF = os.environ["PTPROF"]
ROOT = os.environ["SOURCE_ROOT"]
SHARED = os.environ.get("SHARED_TESTDATA", os.path.join(ROOT, "..", "shared", "testdata"))

from tally import Tally

TALLY = Tally()
JOINED = {"segments": 0, "joined": 0, "parts": 0, "redone": 0, "stretched": 0, "piped": 0}


def decode(path, jobs, segment=None, insn=False, fmt="jsonl"):
    cmd = [PTPROF, "decode", "--format", fmt, "--verbose", "--jobs", str(jobs)]
    if segment:
        cmd += ["--psb-segment", str(segment)]
    if insn:
        cmd.append("--insn")
    out = subprocess.run(cmd + [path], capture_output=True)
    return out.returncode, out.stdout, out.stderr.decode(errors="replace")


def count_joins(err):
    """Adds up what --verbose says of the segments, joins and parts."""
    for m in re.finditer(r"decoded in (\d+) segments, (\d+) joined", err):
        JOINED["segments"] += int(m.group(1))
        JOINED["joined"] += int(m.group(2))
    for m in re.finditer(r"the consumer's parts (\d+) folded(?: and (\d+) decoded again)?", err):
        JOINED["parts"] += int(m.group(1))
        JOINED["redone"] += int(m.group(2) or 0)
    for m in re.finditer(r"(\d+) that did not join decoded again", err):
        JOINED["stretched"] += int(m.group(1))
    for m in re.finditer(r"consumed on a second thread in (\d+) parts", err):
        JOINED["piped"] += int(m.group(1))


def compare(name, path, segment, insn=False, fmt="jsonl"):
    code1, one, _ = decode(path, 1, insn=insn, fmt=fmt)
    code2, two, err = decode(path, 2, segment, insn=insn, fmt=fmt)
    count_joins(err)
    if code1 != code2:
        TALLY.report(name, f"exit {code1} on one thread, {code2} on two")
    elif one != two:
        a, b = one.splitlines(), two.splitlines()
        first = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), min(len(a), len(b)))
        TALLY.report(name, f"outputs differ from line {first + 1} ({len(a)} and {len(b)} lines)")
    elif not one:
        TALLY.report(name, "no output")
    else:
        TALLY.report(name, None)


def fuzz(dirs, snapshots):
    name, buffer = "juno-uname-001", "uname_trace.bin"
    if name not in dirs:
        TALLY.skip("fuzzed buffers", f"{name} is absent")
        return
    rng = random.Random(20261125)
    with tempfile.TemporaryDirectory() as tmp:
        for case in range(6):
            dst = os.path.join(tmp, f"{name}-{case}")
            shutil.copytree(os.path.join(snapshots, name), dst)
            os.chmod(dst, 0o755)
            path = os.path.join(dst, buffer)
            os.chmod(path, 0o644)
            data = bytearray(open(path, "rb").read())
            for _ in range(rng.choice((1, 8, 64))):
                data[rng.randrange(len(data))] = rng.randrange(256)
            open(path, "wb").write(bytes(data))
            compare(f"{name} fuzzed #{case} --psb-segment 2048", dst, 2048)


def repeated(snapshots, tmp, name, buffer, copies):
    """A copy of snapshot `name` whose `buffer` holds the original `copies` times."""
    dst = os.path.join(tmp, f"{name}x{copies}")
    shutil.copytree(os.path.join(snapshots, name), dst)
    os.chmod(dst, 0o755)
    path = os.path.join(dst, buffer)
    os.chmod(path, 0o644)
    data = open(path, "rb").read()
    open(path, "wb").write(data * copies)
    return dst


def compare_delta(name, path, segment, pair):
    runs = []
    for jobs, extra in ((1, []), (2, ["--psb-segment", str(segment)])):
        cmd = [PTPROF, "delta", "--verbose", "--format", "json", "--pair", pair, "--jobs", str(jobs)]
        runs.append(subprocess.run(cmd + extra + [path], capture_output=True))
    one, two = runs
    count_joins(two.stderr.decode(errors="replace"))
    if one.returncode != 0 or two.returncode != 0:
        TALLY.report(name, f"exit {one.returncode} on one thread, {two.returncode} on two: "
                           f"{two.stderr.decode(errors='replace').strip()}")
    elif one.stdout != two.stdout:
        TALLY.report(name, "the reports differ")
    elif b'"intervals"' not in one.stdout:
        TALLY.report(name, "no intervals in the report")
    else:
        TALLY.report(name, None)


def parts(snapshots, dirs):
    if "TC2" not in dirs:
        TALLY.skip("TC2 repeated", "TC2 is absent")
        return
    before = JOINED["parts"]
    with tempfile.TemporaryDirectory() as tmp:
        path = repeated(snapshots, tmp, "TC2", "cstrace.bin", 32)
        compare("TC2 x32 --psb-segment 262144", path, 262144)
        compare_delta("TC2 x32 delta --pair a32IrqOff,a32IrqOn --psb-segment 262144", path,
                      262144, "a32IrqOff,a32IrqOn")
    TALLY.check("TC2 x32: the consumer's parts were folded", JOINED["parts"] - before >= 6,
                f"{JOINED['parts'] - before} parts folded")


def damaged(snapshots, dirs):
    """TC2 repeated to 2 MiB, a copy cut short (after a stretch of other frames) at the 256 KiB
    cuts 2 and 3: the pieces either side of them do not join, the stretch decodes on over them, and
    the pieces after them join again."""
    if "TC2" not in dirs:
        TALLY.skip("TC2 damaged at two cuts", "TC2 is absent")
        return
    with tempfile.TemporaryDirectory() as tmp:
        dst = repeated(snapshots, tmp, "TC2", "cstrace.bin", 1)
        path = os.path.join(dst, "cstrace.bin")
        one = open(path, "rb").read()
        seam = one[8000:17600] + one[:8000]
        data = b"".join(((seam if k in (2, 3) else b"") + one * 8)[:262144] for k in range(8))
        open(path, "wb").write(data)
        for insn in (False, True):
            before = dict(JOINED)
            compare(f"TC2 damaged at two cuts{' --insn' if insn else ''}", dst, 262144, insn=insn)
            joined = JOINED["joined"] - before["joined"]
            stretched = JOINED["stretched"] - before["stretched"]
            TALLY.check(f"TC2 damaged at two cuts{' --insn' if insn else ''}: joined after them",
                        joined == 5 and stretched == 2, f"{joined} joined, {stretched} decoded again")


def given_up(snapshots, dirs):
    """juno-uname-001's buffer repeated 16 times in 64 KiB pieces: every copy ends in a seam that
    costs a source its synchronisation, so the joins are given up after three pieces and the
    rest is decoded in one piece, consumed in parts on a second thread (src/model/part_pipe.h)."""
    if "juno-uname-001" not in dirs:
        TALLY.skip("juno-uname-001 repeated", "juno-uname-001 is absent")
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = repeated(snapshots, tmp, "juno-uname-001", "uname_trace.bin", 16)
        for insn in (False, True):
            name = f"juno-uname-001 x16{' --insn' if insn else ''} --psb-segment 65536"
            before = JOINED["piped"]
            compare(name, path, 65536, insn=insn)
            TALLY.check(f"{name}: the rest consumed in parts on a second thread",
                        JOINED["piped"] - before >= 2, f"{JOINED['piped'] - before} parts")


def main():
    snapshots = os.path.join(SHARED, "opencsd", "snapshots")
    if not os.path.isdir(snapshots):
        TALLY.skip("CoreSight snapshots", f"{snapshots} is absent")
        TALLY.finish()
    dirs = sorted(d for d in os.listdir(snapshots) if os.path.isfile(os.path.join(snapshots, d, "snapshot.ini")))
    for d in dirs:
        for segment in (1024, 4096):
            compare(f"{d} --psb-segment {segment}", os.path.join(snapshots, d), segment)
    for d in ("juno-uname-001", "TC2"):
        if d in dirs:
            compare(f"{d} --insn", os.path.join(snapshots, d), 2048, insn=True)
            # Text: each thread's parts disassemble with a capstone handle of their own.
            compare(f"{d} --insn --format text", os.path.join(snapshots, d), 2048, insn=True,
                    fmt="text")
    ete = os.path.join(SHARED, "opencsd", "snapshots-ete")
    if os.path.isdir(ete):
        for d in sorted(os.listdir(ete)):
            if os.path.isfile(os.path.join(ete, d, "snapshot.ini")):
                compare(f"ete/{d} --psb-segment 1024", os.path.join(ete, d), 1024)
    etm = os.path.join(SHARED, "simpleperf", "testdata", "etm")
    for name in ("perf_etm.data", "perf_with_unformatted_trace.data"):
        perf = os.path.join(etm, name)
        if os.path.isfile(perf):
            compare(f"simpleperf {name} --psb-segment 64", perf, 64)
        else:
            TALLY.skip(f"simpleperf {name}", f"{perf} is absent")
    fuzz(dirs, snapshots)
    parts(snapshots, dirs)
    damaged(snapshots, dirs)
    given_up(snapshots, dirs)
    print(f"segments: {JOINED['segments']}, joined: {JOINED['joined']}, parts folded: "
          f"{JOINED['parts']}, decoded again: {JOINED['redone']}, did not join and decoded again "
          f"with the piece before: {JOINED['stretched']}, consumed in parts on a second thread: "
          f"{JOINED['piped']}")
    TALLY.check("buffers were cut and segments joined", JOINED["segments"] > 50 and JOINED["joined"] > 50,
                f"{JOINED['segments']} segments, {JOINED['joined']} joined")
    TALLY.finish()


if __name__ == "__main__":
    main()
