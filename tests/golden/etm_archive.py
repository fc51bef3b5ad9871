#!/usr/bin/env python3
"""archive of CoreSight inputs: a .ptar decodes like the original, without the original.

For the OpenCSD snapshots juno-uname-002 and TC2 (directories) and simpleperf's cs_etm
perf_etm.data (binary etm_test_loop under --symfs), each input is copied to a temporary place,
decoded (text and --insn JSONL) and summarised (info --format json), archived, and the copy (with
its binaries) removed; then `decode` and `info` of the .ptar must print the same (info's input
name and the trace buffer's path aside, which name the archive). A .ptar with one bit flipped in
one member must fail with exit 1 and one line naming that member. Exits 77 (SKIP) when the shared
test data is absent.
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tally import Tally  # noqa: E402

PTPROF = os.path.abspath(os.environ.get("PTPROF", "build/ptprof"))
DATA = os.environ.get("SHARED_TESTDATA", "../shared/testdata")
SNAPSHOTS = [os.path.join(DATA, "opencsd", "snapshots", n) for n in ("juno-uname-002", "TC2")]
ETM = os.path.join(DATA, "simpleperf", "testdata", "etm")
LOOP_PATH = "data/local/tmp/etm_test_loop"  # where simpleperf's recording ran the binary


def run(*args):
    return subprocess.run([PTPROF, *args], capture_output=True, timeout=120)


def outputs(path, extra=()):
    """What decode (text, and JSONL per instruction) and info print for `path`."""
    return {
        "decode": run("decode", *extra, path),
        "decode --insn": run("decode", "--insn", "--format", "jsonl", *extra, path),
        "info": run("info", "--format", "json", path),
    }


def normal_info(stdout):
    """info JSON without the fields that name the input's location."""
    j = json.loads(stdout)
    j.pop("input", None)
    for b in j.get("buffers", []):
        b["file"] = os.path.basename(b["file"])
    return j


def compare(t, name, before, after):
    for what, b in before.items():
        a = after[what]
        if b.returncode != 0:
            t.report(f"{name}: {what} of the original", f"exit {b.returncode}: {b.stderr.decode()[-300:]}")
            continue
        if a.returncode != 0:
            t.report(f"{name}: {what} of the archive", f"exit {a.returncode}: {a.stderr.decode()[-300:]}")
            continue
        if what == "info":
            same = normal_info(b.stdout) == normal_info(a.stdout)
        else:
            same = b.stdout == a.stdout
        lines, lines_after = b.stdout.count(b"\n"), a.stdout.count(b"\n")
        t.check(f"{name}: {what} of the archive equals the original's ({lines} lines)", same and lines > 0,
                f"outputs differ ({lines} vs {lines_after} lines)")


def members(archive):
    """The members table and the offset of each member's frame, from frame 0 (zstd -dc)."""
    z = subprocess.run(["zstd", "-dc", archive], capture_output=True)
    size = struct.unpack_from("<Q", z.stdout, 16)[0]
    manifest = json.loads(z.stdout[56:56 + size])
    table = manifest["members"]
    offset = os.path.getsize(archive) - sum(m["packed_size"] for m in table)
    out = []
    for m in table:
        out.append((m["name"], offset, m["packed_size"]))
        offset += m["packed_size"]
    return manifest, out


def check_bit_flip(t, name, archive, tmp):
    if not shutil.which("zstd"):
        t.skip(f"{name}: bit flip", "zstd (to read the members table) is not installed")
        return
    manifest, table = members(archive)
    member, offset, packed = max(table, key=lambda m: m[2])  # the largest: a trace or a binary
    data = bytearray(open(archive, "rb").read())
    data[offset + packed // 2] ^= 0x10
    bad = os.path.join(tmp, "flipped.ptar")
    open(bad, "wb").write(data)
    r = run("decode", bad)
    err = r.stderr.decode().strip().splitlines()
    t.check(f"{name}: one bit flipped in member {member} is one error naming it",
            r.returncode == 1 and len(err) == 1 and f"member '{member}'" in err[0] and not r.stdout,
            f"exit {r.returncode}, stderr {err}")
    t.check(f"{name}: manifest source kind", manifest["source"]["kind"] in
            ("coresight-snapshot", "cs_etm-perf-data"), manifest["source"])


def snapshot_case(t, snapshot, tmp):
    name = os.path.basename(snapshot)
    copy = os.path.join(tmp, name)
    shutil.copytree(snapshot, copy, ignore=shutil.ignore_patterns("pkt_proc_logs"))
    before = outputs(copy)
    archive = os.path.join(tmp, name + ".ptar")
    r = run("archive", copy, "-o", archive)
    if r.returncode != 0:
        t.report(f"{name}: archive", f"exit {r.returncode}: {r.stderr.decode().strip()}")
        return
    print(f"      {r.stdout.decode().strip()} (directory: {du(copy)} bytes)")
    shutil.rmtree(copy)  # the archive alone from here on
    compare(t, name, before, outputs(archive))
    check_bit_flip(t, name, archive, tmp)


def du(path):
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)


def perf_case(t, tmp):
    name = "perf_etm.data"
    perf = os.path.join(tmp, name)
    shutil.copy(os.path.join(ETM, name), perf)
    symfs = os.path.join(tmp, "symfs")
    os.makedirs(os.path.dirname(os.path.join(symfs, LOOP_PATH)))
    shutil.copy(os.path.join(ETM, "etm_test_loop"), os.path.join(symfs, LOOP_PATH))
    before = outputs(perf, ("--symfs", symfs))
    archive = os.path.join(tmp, "perf_etm.ptar")
    r = run("archive", perf, "--symfs", symfs, "-o", archive)
    if r.returncode != 0:
        t.report(f"{name}: archive", f"exit {r.returncode}: {r.stderr.decode().strip()}")
        return
    print(f"      {r.stdout.decode().strip()}")
    t.check(f"{name}: archive stores etm_test_loop", "1 binary (" in r.stdout.decode(),
            r.stdout.decode().strip())
    os.remove(perf)
    shutil.rmtree(symfs)
    compare(t, name, before, outputs(archive))
    check_bit_flip(t, name, archive, tmp)


def main():
    present = [s for s in SNAPSHOTS if os.path.isdir(s)]
    have_perf = os.path.isfile(os.path.join(ETM, "perf_etm.data"))
    if not present and not have_perf:
        print(f"SKIP  etm_archive: neither the OpenCSD snapshots nor {ETM} are present (shared test data)")
        sys.exit(77)
    t = Tally()
    with tempfile.TemporaryDirectory() as tmp:
        for snapshot in SNAPSHOTS:
            if snapshot in present:
                snapshot_case(t, snapshot, tmp)
            else:
                t.skip(os.path.basename(snapshot), f"{snapshot} is absent")
        if have_perf:
            perf_case(t, tmp)
        else:
            t.skip("perf_etm.data", f"{ETM} is absent")
    t.finish()


if __name__ == "__main__":
    main()
