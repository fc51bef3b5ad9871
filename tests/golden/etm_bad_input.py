#!/usr/bin/env python3
"""Bad CoreSight snapshots: a clear one-line error (exit 1) or gaps in the decode, never a crash.

Copies of real OpenCSD snapshots from ../shared/testdata/opencsd are damaged in a temporary
directory: missing trace buffer, missing device file, a register value that is not a number, a
wrong (but numeric) register value, a truncated buffer, random bytes as trace, a stream that
crashes libopencsd itself, an empty buffer.
SKIPs when the data is absent.
"""
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tally import Tally  # noqa: E402

PTPROF = os.environ.get("PTPROF", "build/ptprof")
DATA = os.path.join(os.environ.get("SHARED_TESTDATA", "../shared/testdata"), "opencsd", "snapshots")


def copy(tmp, name):
    """A writable copy of snapshot `name` in a fresh directory under `tmp`."""
    dst = os.path.join(tempfile.mkdtemp(dir=tmp), name)
    shutil.copytree(os.path.join(DATA, name), dst)
    for root, _, files in os.walk(dst):
        os.chmod(root, 0o755)
        for f in files:
            os.chmod(os.path.join(root, f), 0o644)
    return dst


def edit(path, old, new):
    with open(path) as f:
        text = f.read()
    assert old in text, (path, old)
    with open(path, "w") as f:
        f.write(text.replace(old, new))


def run(*args):
    return subprocess.run([PTPROF, *args], capture_output=True, text=True, timeout=120)


def expect_error(t, name, result, pattern):
    """Exit 1 with exactly one 'ptprof: ...' line matching `pattern`."""
    lines = [l for l in result.stderr.splitlines() if not l.startswith("ptprof: warning:")]
    if result.returncode != 1:
        t.report(name, f"exit {result.returncode}, expected 1; stderr: {result.stderr.strip()[:300]}")
    elif len(lines) != 1 or not re.search(pattern, lines[0]):
        t.report(name, f"expected one line matching {pattern!r}, got {lines}")
    else:
        t.report(name, None)
        print(f"      {lines[0]}")


def expect_decode(t, name, result, check=None):
    """Exit 0 (the damage shows as gaps in the flow), or a clean error; never a signal."""
    if result.returncode < 0 or result.returncode > 2:
        t.report(name, f"crashed or failed badly: exit {result.returncode}; {result.stderr.strip()[:300]}")
        return
    problem = check(result) if check and result.returncode == 0 else None
    t.report(name, problem)
    if not problem:
        gaps = result.stdout.count("[gap:")
        blocks = sum(1 for l in result.stdout.splitlines() if " insns " in l)
        print(f"      exit {result.returncode}: {blocks} blocks, {gaps} gaps"
              + (f"; {result.stderr.strip().splitlines()[-1]}" if result.stderr.strip() else ""))


def main():
    t = Tally()
    if not os.path.isdir(DATA):
        t.skip("etm bad input", f"{DATA} is absent (the shared CoreSight test data)")
        t.finish()
    with tempfile.TemporaryDirectory() as tmp:
        s = copy(tmp, "a57_single_step")
        os.remove(os.path.join(s, "CSTMC_TRACE_FIFO.bin"))
        expect_error(t, "missing trace buffer", run("decode", s),
                     r"trace\.ini:\d+: file: trace buffer file '.*CSTMC_TRACE_FIFO\.bin' does not exist")

        s = copy(tmp, "juno-uname-002")
        os.remove(os.path.join(s, "device_7.ini"))
        expect_error(t, "missing device file", run("info", s),
                     r"snapshot\.ini:\d+: device7: device file '.*device_7\.ini' does not exist")

        s = copy(tmp, "TC2")
        edit(os.path.join(s, "device_5.ini"), "ETMCCER(0x07A)=0x344008F2", "ETMCCER(0x07A)=0x34G008F2")
        expect_error(t, "register value not a number", run("decode", s),
                     r"device_5\.ini:9: ETMCCER: '0x34G008F2' is not a number")

        s = copy(tmp, "TC2")
        edit(os.path.join(s, "device_5.ini"), "ETMCCER(0x07A)=0x344008F2\n", "")
        expect_error(t, "register missing", run("dump", s),
                     r"device_5\.ini: \[regs\] has no ETMCCER register \(needed for ETMv3\)")

        s = copy(tmp, "juno-uname-002")
        edit(os.path.join(s, "device_6.ini"), "TRCIDR0(0x078)=0x28000EA1", "TRCIDR0(0x078)=0xFFFFFFFF")
        edit(os.path.join(s, "device_6.ini"), "TRCCONFIGR(0x004)=0x00000000", "TRCCONFIGR(0x004)=0xFFFFFFFF")
        expect_decode(t, "wrong register values (numeric)", run("decode", s))

        s = copy(tmp, "juno-uname-002")
        with open(os.path.join(s, "trace.bin"), "r+b") as f:
            f.truncate(80000 + 7)  # mid-frame; the whole buffer decodes to 5,815 blocks
        expect_decode(t, "truncated trace buffer", run("decode", s),
                      lambda r: None if 0 < r.stdout.count(" insns ") < 5815
                      else f"{r.stdout.count(' insns ')} blocks: expected some, fewer than 5,815")

        s = copy(tmp, "juno-uname-002")
        rng = random.Random(4)
        with open(os.path.join(s, "trace.bin"), "wb") as f:
            f.write(bytes(rng.randrange(256) for _ in range(65536)))
        expect_decode(t, "random bytes as trace (formatted)", run("decode", s))

        ete = os.path.join(os.path.dirname(DATA), "snapshots-ete", "ete_ip")
        if os.path.isdir(ete):
            s = os.path.join(tempfile.mkdtemp(dir=tmp), "ete_ip")
            shutil.copytree(ete, s)
            for root, _, files in os.walk(s):
                os.chmod(root, 0o755)
                for f in files:
                    os.chmod(os.path.join(root, f), 0o644)
            target = os.path.join(s, "session1.bin")
            with open(target, "wb") as f:
                f.write(bytes(rng.randrange(256) for _ in range(32768)))
            expect_decode(t, "random bytes as trace (unformatted ETE)", run("decode", s))

        # A damaged ETMv4 stream on which libopencsd 1.3.3 itself segfaults (found by fuzzing,
        # tests/fuzz/corpus/etm/etm-v4-process-exception), three times in 4 KiB chunks, with the
        # registers it crashed under: each crash is a gap and the decode goes on.
        s = copy(tmp, "init-short-addr")
        for reg, value in [("TRCCONFIGR(id:0x4)=0x00000001", "0x000018c1"),
                           ("TRCTRACEIDR(id:0x10)=0x00000000", "0x00000010"),
                           ("TRCIDR0(id:0x78)=0x08000CA1", "0x28000EA1"),
                           ("TRCIDR1(id:0x79)=0x4200F440", "0x4100F403"),
                           ("TRCIDR2(id:0x7A)=0x20001088", "0x00000488")]:
            edit(os.path.join(s, "device2.ini"), reg, reg.split("=")[0] + "=" + value)
        crashing = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fuzz", "corpus",
                                "etm", "etm-v4-process-exception")
        with open(crashing, "rb") as f:
            stream = f.read()[1:]  # the fuzz target's first byte picks the format
        with open(os.path.join(s, "tracebuffer.bin"), "wb") as f:
            f.write((stream + bytes(4096 - len(stream))) * 3)
        crash = ("decoder error at offset 0x0: libopencsd crashed (SIGSEGV) decoding the trace from "
                 "here; the 4096 bytes up to offset 0x1000 are skipped and a new decoder goes on")

        def crashed_and_went_on(result):
            if crash not in result.stdout:
                return f"no line '{crash}'"
            if not re.search(r"offset 0x1[0-9a-f]{3}\b|Idx:4[01]\d\d;", result.stdout):
                return "nothing decoded after the chunk that crashed libopencsd"
            return None

        expect_decode(t, "libopencsd crashing on the trace", run("decode", s), crashed_and_went_on)
        # (Its packet processor alone does not crash on it: dump lists all three copies.)
        expect_decode(t, "libopencsd crashing on the trace (dump)", run("dump", s),
                      lambda r: None if "Idx:8223;" in r.stdout else "the third copy is not listed")

        s = copy(tmp, "a57_single_step")
        open(os.path.join(s, "CSTMC_TRACE_FIFO.bin"), "wb").close()
        expect_error(t, "empty trace buffer", run("decode", s), r"the trace buffer is empty")

        s = copy(tmp, "a57_single_step")
        edit(os.path.join(s, "trace.ini"), "format=", "format=bogus_")
        expect_error(t, "unknown buffer format", run("info", s), r"trace\.ini:\d+: format: unknown trace buffer format")
    t.finish()


if __name__ == "__main__":
    main()
