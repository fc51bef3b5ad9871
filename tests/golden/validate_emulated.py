#!/usr/bin/env python3
"""`ptprof validate` end to end: a program recorded with the emulated PT recorder (A) against
LBR-like branch records of a second, independent recording of the same program (B).

B is made the way hardware LBR would sample it: the taken branches of the second recording's flow
(`decode --branches`, 16 per sample) are kept every 7th sample and written into a perf.data with
PERF_SAMPLE_BRANCH_STACK samples and MMAP2 records of the program's executable segments (from its
ELF program headers and the load addresses the archive records), i.e. B goes through the LBR
reader and is normalised through its own mmaps, A through its archive's images. Until the
software branch tracer's .ptar is available this stands in for a native recording.

Cases: a deterministic workload (workload_recursion 14) and a Debian tool on a fixed input
(gzip -c of a generated 64 KiB file): mapped 100%, path consistency >= 99%, profile similarity
reported, the same JSON report with the flow collected in parts on two threads. Bad input: records of another program (0% map), a perf.data without branch stacks.
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from tally import Tally  # noqa: E402

PTPROF = os.environ["PTPROF"]
BUILD = os.path.dirname(PTPROF)
RECURSION = os.path.join(BUILD, "src", "record", "workload_recursion")
PLUGIN = os.path.join(BUILD, "src", "record", "qemu", "libptprof_qemu.so")
t = Tally()

if not shutil.which("qemu-x86_64"):
    print("SKIP: qemu-x86_64 is not installed (tools/setup.sh installs qemu-user)")
    sys.exit(77)
if not os.path.exists(RECURSION) or not os.path.exists(PLUGIN):
    print(f"SKIP: {RECURSION} or {PLUGIN} is not built")
    sys.exit(77)
os.environ.setdefault("PTPROF_QEMU_PLUGIN", PLUGIN)


def run(*args):
    return subprocess.run([PTPROF, *args], capture_output=True, text=True)


def record(out, cmd):
    # The program's output (gzip's compressed bytes) is not needed.
    return subprocess.run([PTPROF, "record", "--backend", "qemu", "-q", "--force", "-o", out, "--", *cmd],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def exec_segments(path, base):
    """(address, length, file offset) of the executable PT_LOAD segments of ELF `path` loaded with
    its lowest segment at `base` (0: at its link-time addresses)."""
    data = open(path, "rb").read()
    phoff = struct.unpack_from("<Q", data, 0x20)[0]
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    loads = []
    for i in range(phnum):
        p_type, p_flags, p_offset, p_vaddr, _, p_filesz = struct.unpack_from("<IIQQQQ", data, phoff + i * phentsize)
        if p_type == 1:
            loads.append((p_flags, p_offset, p_vaddr, p_filesz))
    lowest = min(v for _, _, v, _ in loads) & ~0xfff
    shift = (base - lowest) if base else 0
    out = []
    for flags, offset, vaddr, filesz in loads:
        if flags & 1:
            start, pgoff = (vaddr + shift) & ~0xfff, offset & ~0xfff
            out.append((start, ((offset + filesz + 0xfff) & ~0xfff) - pgoff, pgoff))
    return out


def write_lbr_perf_data(path, samples, mmaps, pid=1000):
    """A perf.data (file mode) with one event sampling IP|TID|TIME|BRANCH_STACK, MMAP2 records for
    `mmaps` [(address, length, pgoff, file)] and one sample per branch stack (oldest first in
    `samples`; perf stores the newest first)."""
    records = b""
    for addr, length, pgoff, name in mmaps:
        fname = name.encode() + b"\0"
        fname += b"\0" * (-len(fname) % 8)
        body = struct.pack("<IIQQQIIQQII", pid, pid, addr, length, pgoff, 0, 0, 0, 0, 5, 2) + fname
        records += struct.pack("<IHH", 10, 2, 8 + len(body)) + body
    for time, sample in enumerate(samples):
        body = struct.pack("<QIIQQ", sample[-1][1], pid, pid, time + 1, len(sample))
        for frm, to in reversed(sample):
            body += struct.pack("<QQQ", frm, to, 0)
        records += struct.pack("<IHH", 9, 2, 8 + len(body)) + body
    attr = struct.pack("<IIQQQQQIIQQQ", 0, 112, 0, 1, 1 | 2 | 4 | 2048, 0, 0, 0, 0, 0, 0, 0)
    attr += b"\0" * (112 - len(attr))
    attrs_offset = 104
    attr_entry = attr + struct.pack("<QQ", 0, 0)
    data_offset = attrs_offset + len(attr_entry)
    header = b"PERFILE2" + struct.pack("<QQQQQQQQ", 104, len(attr_entry), attrs_offset, len(attr_entry),
                                       data_offset, len(records), 0, 0) + b"\0" * 32
    with open(path, "wb") as f:
        f.write(header + attr_entry + records)


def lbr_from_recording(archive, out, every=7, depth=16, only=None):
    """B: every `every`-th pseudo-sample of `depth` taken branches of `archive`'s flow, as LBR."""
    r = run("decode", "--branches", "--lbr-depth", str(depth), "--format", "jsonl", archive)
    if r.returncode != 0:
        return r.stderr.strip()
    samples = {}
    for line in r.stdout.splitlines():
        rec = json.loads(line)
        samples.setdefault(rec["sample"], []).append((int(rec["from"], 16), int(rec["to"], 16)))
    kept = [samples[k] for k in sorted(samples) if k % every == 0 and len(samples[k]) == depth]
    info = run("info", "--format", "json", archive)
    if info.returncode != 0:
        return info.stderr.strip()
    images = json.loads(info.stdout).get("manifest", {}).get("images", [])
    mmaps = []
    for image in images:
        path = image.get("path", "")
        if image.get("kind") != "elf" or not os.path.exists(path):
            continue
        if only and os.path.basename(path) != only:
            continue
        for start, length, pgoff in exec_segments(path, int(str(image.get("base", 0)), 0)):
            mmaps.append((start, length, pgoff, path))
    write_lbr_perf_data(out, kept, mmaps)
    return None


def validate_case(name, cmd, tmp):
    a, a2, b = (os.path.join(tmp, f"{name}.{x}") for x in ("a.ptar", "b.ptar", "lbr.data"))
    for out in (a, a2):
        r = record(out, cmd)
        if r.returncode != 0:
            t.check(f"{name}: record", False, r.stderr.strip())
            return None
    problem = lbr_from_recording(a2, b)
    if problem:
        t.check(f"{name}: LBR-like records from the second recording", False, problem)
        return None
    r = run("validate", "--format", "json", a, b)
    t.check(f"{name}: validate", r.returncode == 0, r.stderr.strip())
    if r.returncode != 0:
        return None
    v = json.loads(r.stdout)
    path = v["path_consistency"]
    print(f"      {name}: {v['b']['bursts']} bursts, mapped {v['mapped_percent']:.1f}%, in flow "
          f"{path['in_flow_percent']:.2f}%, feasible only {path['feasible_only_percent']:.2f}%, "
          f"inconsistent {path['inconsistent_percent']:.2f}%; edges "
          f"{v['profile_similarity']['edge_overlap_percent']:.1f}%, ranges "
          f"{v['profile_similarity']['range_overlap_percent']:.1f}%")
    t.check(f"{name}: every burst maps into A's files", v["mapped_percent"] == 100.0, f"{v['mapped_percent']}")
    t.check(f"{name}: path consistency >= 99%", path["consistent_percent"] >= 99.0,
            json.dumps(path["counterexamples"][:2]))
    t.check(f"{name}: profile similarity reported", 0 < v["profile_similarity"]["edge_overlap_percent"] <= 100.0)
    # The same report when the flow is collected in parts on two threads (short segments: many
    # parts, so that runs, ranges and pending branches cross their boundaries).
    parted = run("validate", "--format", "json", "--jobs", "2", "--psb-segment", "2048", "--verbose",
                 a, b)
    t.check(f"{name}: --jobs 2 gives the same report", parted.returncode == 0 and
            parted.stdout == r.stdout, parted.stderr.strip())
    if name == "gzip":  # the recursion's trace is too short to cut
        t.check(f"{name}: --jobs 2 collects the flow in parts", "consumed in parts" in parted.stderr,
                parted.stderr.strip())
    text = run("validate", a, b)
    t.check(f"{name}: text report", text.returncode == 0 and "path consistency" in text.stdout
            and "profile similarity" in text.stdout, text.stderr.strip())
    return a, b


tmp = tempfile.mkdtemp()
try:
    rec = validate_case("recursion", [RECURSION, "14"], tmp)
    gzip = shutil.which("gzip")
    if gzip:
        fixed = os.path.join(tmp, "input.txt")
        with open(fixed, "w") as f:
            for i in range(4096):
                f.write(f"line {i} {(i * 2654435761) % 1000003} the quick brown fox\n")
        gz = validate_case("gzip", [gzip, "-c", "-6", fixed], tmp)
    else:
        gz = None
        t.skip("gzip", "gzip is not installed")
    # Bad input: B of another program; a perf.data without branch stacks.
    if rec and gz:
        # gzip's own records only (its libc and loader are the recursion's too).
        gz_only = os.path.join(tmp, "gzip-only.lbr.data")
        lbr_from_recording(gz[0], gz_only, only="gzip")
        r = run("validate", rec[0], gz_only)
        t.check("records of another program: exit 1, '0% of ... bursts map'",
                r.returncode == 1 and "0% of" in r.stderr and r.stderr.count("\n") == 1, r.stderr.strip())
    if rec:
        empty = os.path.join(tmp, "empty.data")
        write_lbr_perf_data(empty, [], [])
        with open(empty, "r+b") as f:  # the same file with a sample_type without BRANCH_STACK
            f.seek(104 + 24)
            f.write(struct.pack("<Q", 1 | 2 | 4))
        r = run("validate", rec[0], empty)
        t.check("B without branch stacks: exit 1 naming the file", r.returncode == 1 and empty in r.stderr
                and "no branch stacks" in r.stderr, r.stderr.strip())
finally:
    shutil.rmtree(tmp)
t.finish()
