#!/usr/bin/env python3
"""Differential test of the fast flow engine (decoders/pt/fast) and of the parallel decode over
PSB segments (decoders/pt/parallel_flow.h).

`ptprof decode --jobs 1` (libipt over the whole stream), `--jobs 2`/`--jobs 3` with small
`--psb-segment`s (many cuts, so many joins), and `--engine fast` on one thread and on two with
small segments must print byte-identical JSONL, blocks and instructions (and text, with
`--summary`, for the recordings: the writers and the summary take their stream in parts), on:
1. every .ptar under traces/ (emulated recordings of real programs, the kernel lab, delta);
2. libipt's own .ptt tests with three PSBs or more (../shared/testdata/libipt, one segment per PSB);
3. fuzzed traces: the raw stream of traces/qemu/gzip.ptar with bytes flipped and cut short, decoded
   against the archive's own images.
Instructions (`--insn`) too: libipt's instruction decoder against the fast engine's blocks
expanded (decoders/pt/insn_expander.h), on all of the above. Also `--around` and `--interval` windows (their parts scanned, the parts they lie in decoded
again in order). It also checks that the parallel path was taken (`--verbose` names the segments),
and prints how many segments the fast engine decoded itself and how many it handed to libipt.
"""
import json
import os
import random
import subprocess
import sys
import tempfile

PTPROF = os.environ["PTPROF"]
ROOT = os.environ["SOURCE_ROOT"]
SHARED = os.environ.get("SHARED_TESTDATA", os.path.join(ROOT, "..", "shared", "testdata"))

from tally import Tally

TALLY = Tally()


FAST = {"fast": 0, "libipt": 0}


def decode(args, jobs, segment=None, insn=False, engine="libipt", text=False):
    cmd = [PTPROF, "decode", "--verbose", "--jobs", str(jobs), "--engine", engine]
    cmd += ["--summary"] if text else ["--format", "jsonl"]
    if segment:
        cmd += ["--psb-segment", str(segment)]
    if insn:
        cmd.append("--insn")
    out = subprocess.run(cmd + args, capture_output=True)
    return out.returncode, out.stdout, out.stderr.decode(errors="replace")


def segments_of(stderr):
    total = 0
    for line in stderr.splitlines():
        if "decoded in " in line:
            total = max(total, int(line.split("decoded in ")[1].split()[0]))
    return total


def first_difference(a, b):
    la, lb = a.splitlines(), b.splitlines()
    for i, (x, y) in enumerate(zip(la, lb)):
        if x != y:
            return f"line {i + 1}: {x[:160]!r} != {y[:160]!r}"
    return f"{len(la)} lines != {len(lb)} lines"


def fast_counts(stderr):
    """How many segments the fast engine and libipt took (decode --verbose)."""
    fast = libipt = 0
    for line in stderr.splitlines():
        if "fast engine: " in line:
            fast += int(line.split("fast engine: ")[1].split()[0])
            libipt += int(line.split("libipt: ")[1].split(";")[0])
    return fast, libipt


def compare_engines(name, args, segment, insn=False):
    """libipt on one thread against the fast engine on one thread and on two in segments: blocks,
    or instructions (libipt's instruction decoder against the fast engine's blocks expanded)."""
    rc1, out1, err1 = decode(args, 1, insn=insn)
    for jobs in (1, 2):
        rcf, outf, errf = decode(args, jobs, segment if jobs > 1 else None, insn=insn, engine="fast")
        label = f"{name} fast engine, {jobs} thread{'s' if jobs > 1 else ''}"
        if rc1 != rcf:
            TALLY.report(label, f"exit {rc1} libipt, {rcf} fast: {errf.strip()[:200]}")
            continue
        if out1 != outf:
            TALLY.report(label, first_difference(out1, outf))
            continue
        fast, libipt = fast_counts(errf)
        FAST["fast"] += fast
        FAST["libipt"] += libipt
        TALLY.report(label, None)


def compare(name, args, segment, jobs=2, insn=False, want_parallel=True, text=False,
            want_redone=False, engine="libipt"):
    if not insn and not text:
        compare_engines(name, args, segment)
    rc1, out1, err1 = decode(args, 1, insn=insn, text=text)
    rcn, outn, errn = decode(args, jobs, segment, insn=insn, text=text, engine=engine)
    if rc1 != rcn:
        TALLY.report(name, f"exit {rc1} sequential, {rcn} parallel: {errn.strip()[:200]}")
        return
    if out1 != outn:
        TALLY.report(name, first_difference(out1, outn))
        return
    if want_parallel and segments_of(errn) < 2:
        TALLY.report(name, f"not decoded in segments: {errn.strip()[:200]}")
        return
    if want_redone and "of them again in order" not in errn:
        TALLY.report(name, f"no part decoded again: {errn.strip()[:200]}")
        return
    TALLY.report(name, None)


def compare_branches(name, path, segment, want_parallel):
    """`decode --branches` (the flow's taken branches in pseudo-samples, formatted in parts) on two
    threads against one: text with 16 records a sample, JSONL with 3, and one per unbroken run."""
    for extra in ([], ["--format", "jsonl", "--lbr-depth", "3"], ["--lbr-depth", "0"]):
        label = f"{name} --branches {' '.join(extra)}".rstrip()
        base = [PTPROF, "decode", "--branches", "--verbose"] + extra
        one = subprocess.run(base + ["--jobs", "1", path], capture_output=True)
        two = subprocess.run(base + ["--jobs", "2", "--psb-segment", str(segment), path], capture_output=True)
        err = two.stderr.decode(errors="replace")
        if one.returncode != 0 or two.returncode != 0:
            TALLY.report(label, f"exit {one.returncode} and {two.returncode}: {err.strip()[:200]}")
        elif one.stdout != two.stdout:
            TALLY.report(label, first_difference(one.stdout, two.stdout))
        elif not one.stdout:
            TALLY.report(label, "no branches listed")
        elif want_parallel and "consumed in parts" not in err:
            TALLY.report(label, f"not consumed in parts: {err.strip()[:200]}")
        else:
            TALLY.report(label, None)


def ptar_members(path):
    """The manifest and the members of a .ptar, by name (see docs/formats/ptar.md)."""
    data = subprocess.run(["zstd", "-dcq", path], capture_output=True, check=True).stdout
    header = int.from_bytes(data[12:16], "little")
    size = int.from_bytes(data[16:24], "little")
    manifest = json.loads(data[header:header + size])
    members, at = {}, header + size
    for member in manifest["members"]:
        members[member["name"]] = data[at:at + member["size"]]
        at += member["size"]
    return manifest, members


def raw_inputs(path, work):
    """The .ptar's first stream as a raw trace plus --elf/--raw options for its images."""
    manifest, members = ptar_members(path)
    stream = manifest["streams"][0]
    args = []
    pt = manifest.get("pt", {})
    for key, option in (("mtc_freq", "--mtc-freq"), ("nom_freq", "--nom-freq"),
                        ("cpuid_0x15_eax", "--cpuid-0x15.eax"), ("cpuid_0x15_ebx", "--cpuid-0x15.ebx")):
        if pt.get(key):
            args += [option, str(pt[key])]
    for i, image in enumerate(manifest["images"]):
        blob = members[image["member"]]
        file = os.path.join(work, f"image{i}")
        if image["kind"] == "elf":
            with open(file, "wb") as f:
                f.write(blob)
            args += ["--elf", f"{file}:{image['base']}"]
        elif image["kind"] == "raw":
            start = image.get("member_offset", 0)
            with open(file, "wb") as f:
                f.write(blob[start:start + image["size"]])
            args += ["--raw", f"{file}:{image['address']}"]
    return members[stream["member"]], args


def main():
    if subprocess.run(["which", "zstd"], capture_output=True).returncode != 0:
        print("SKIP: zstd is not installed (tools/setup.sh installs it)")
        sys.exit(77)
    ptars = []
    for folder, _, files in os.walk(os.path.join(ROOT, "traces")):
        ptars += [os.path.join(folder, f) for f in sorted(files) if f.endswith(".ptar")]
    for path in sorted(ptars):
        name = os.path.relpath(path, ROOT)
        size = os.path.getsize(path)
        # A few hundred segments for the large recordings; tiny archives stay whole (their
        # streams have too few PSBs) and must say so.
        compare(f"{name} blocks", [path], 8192, want_parallel=size > 100000)
        compare(f"{name} text and summary", [path], 8192, want_parallel=size > 100000, text=True)
        compare_branches(name, path, 8192, want_parallel=size > 100000)
        compare_engines(f"{name} insns", [path], 8192, insn=True)
        if size > 100000:
            # Segments with PSBs enough for the workers to keep TNT runs as references.
            compare_engines(f"{name} blocks, 64 KiB segments", [path], 65536)
    # Windows: the parts they lie in are decoded again in order, the others only scanned.
    lab = os.path.join(ROOT, "traces/lab/syscalls-function-cyc.ptar")
    for label, window in (("around an offset", ["--around", "0x150000"]),
                          ("around an offset, 2000 events of context",
                           ["--around", "0x150000", "--context", "2000"]),
                          ("one delta interval", ["--interval", "200", "--pair", "superCLI,superSTI"])):
        for segment in (8192, 65536):
            compare(f"traces/lab/syscalls-function-cyc.ptar {label}, segments of {segment}",
                    window + [lab], segment, want_redone=segment > 8192)
    compare("traces/qemu/signals.ptar blocks, 3 jobs",
            [os.path.join(ROOT, "traces/qemu/signals.ptar")], 2048, jobs=3)
    for archive in ("traces/qemu/recursion.ptar", "traces/qemu/signals.ptar"):
        # Instructions from either engine, in every segment, as libipt's on one thread.
        for engine in ("libipt", "fast"):
            compare(f"{archive} insns, {engine} engine asked for", [os.path.join(ROOT, archive)],
                    8192, insn=True, engine=engine)
        # Text: the bytes of every instruction, disassembled.
        compare(f"{archive} insns as text, fast engine", [os.path.join(ROOT, archive)], 8192,
                insn=True, engine="fast", text=True)

    manifest = os.path.join(SHARED, "libipt", "generated", "MANIFEST.tsv")
    if not os.path.exists(manifest):
        TALLY.skip("libipt .ptt tests", f"{manifest} is absent")
    else:
        seen = set()
        with open(manifest) as f:
            rows = [line.rstrip("\n").split("\t") for line in f][1:]
        for test, cpu, folder, load, pt, binary, *_ in rows:
            if test in seen:
                continue
            seen.add(test)
            base = os.path.join(SHARED, "libipt", folder)
            args = ["--pt", os.path.join(base, pt), "--raw", f"{os.path.join(base, binary)}:{load}"]
            if cpu != "none":
                args += ["--cpu", cpu]
            with open(os.path.join(base, pt), "rb") as f:
                psbs = f.read().count(bytes([2, 0x82] * 8))
            if psbs >= 3:  # fewer cannot be cut
                compare(f"libipt {test}", args, 1)
            else:
                compare_engines(f"libipt {test}", args, 1)
            compare_engines(f"libipt {test} insns", args, 1, insn=True)

    with tempfile.TemporaryDirectory() as work:
        rng = random.Random(12)
        for archive in ("traces/qemu/gzip.ptar",):
            trace, args = raw_inputs(os.path.join(ROOT, archive), work)
            for case in range(8):
                damaged = bytearray(trace)
                for _ in range(1 + case * 3):
                    at = rng.randrange(len(damaged))
                    damaged[at] ^= 1 << rng.randrange(8)
                if case % 2:
                    damaged = damaged[:rng.randrange(len(damaged) // 2, len(damaged))]
                file = os.path.join(work, "fuzzed.pt")
                with open(file, "wb") as f:
                    f.write(damaged)
                compare(f"{archive} fuzzed #{case}", ["--pt", file] + args, 1024, want_parallel=False)
                compare_engines(f"{archive} fuzzed #{case} insns", ["--pt", file] + args, 1024,
                                insn=True)
    print(f"fast engine: {FAST['fast']} segments decoded, {FAST['libipt']} handed to libipt")
    TALLY.finish()


if __name__ == "__main__":
    main()
