#!/usr/bin/env python3
"""Bad input never crashes ptprof and always says what and where.

Every command gets: an empty file, a file of random bytes, a missing file, a truncated trace, a
trace damaged in the middle, a missing image, images that do not cover the code, and bad option
values. Rejected input must give exactly one line on stderr naming the file (and the offset for
trace data) with exit status 1 (2 for usage errors). Damaged trace data must decode up to the
damage, report it as a gap, and go on after the next PSB (exit status 0).
"""
import json
import os
import random
import subprocess
import sys
import tempfile

PTPROF = os.environ["PTPROF"]
ROOT = os.environ["SOURCE_ROOT"]
SAMPLE_DIR = os.path.join(ROOT, "traces", "sample")
SAMPLE_PT = os.path.join(SAMPLE_DIR, "sample.pt")
SAMPLE_ELF = os.path.join(SAMPLE_DIR, "sample")

from tally import Tally

TALLY = Tally()
report, skip, check = TALLY.report, TALLY.skip, TALLY.check



def run(args):
    return subprocess.run([PTPROF, *args], capture_output=True, text=True, timeout=60)


def rejected(name, args, status, must_name, must_mention="offset"):
    """The command must fail with `status` and one stderr line naming `must_name`."""
    out = run(args)
    lines = out.stderr.strip().splitlines()
    if out.returncode < 0 or out.returncode >= 128:
        problem = f"crashed (status {out.returncode})"
    elif out.returncode != status:
        problem = f"exit status {out.returncode}, expected {status}; stderr {out.stderr.strip()!r}"
    elif len(lines) != 1:
        problem = f"expected one line on stderr, got {len(lines)}: {out.stderr.strip()!r}"
    elif must_name and must_name not in lines[0]:
        problem = f"stderr does not name {must_name!r}: {lines[0]!r}"
    elif must_mention and must_mention not in lines[0]:
        problem = f"stderr does not mention {must_mention!r}: {lines[0]!r}"
    else:
        problem = None
    report(name, problem)


def jsonl(args):
    out = run(args)
    records = [json.loads(line) for line in out.stdout.splitlines() if line.strip()]
    return out, records


with tempfile.TemporaryDirectory() as tmp:
    def path(name, data):
        p = os.path.join(tmp, name)
        with open(p, "wb") as f:
            f.write(data)
        return p

    sample = open(SAMPLE_PT, "rb").read()
    empty = path("empty.pt", b"")
    rng = random.Random(7)
    noise = path("noise.bin", bytes(rng.randrange(256) for _ in range(4096)).replace(b"\x02\x82", b"\x00\x00"))
    missing = os.path.join(tmp, "missing.pt")

    for cmd in (["info"], ["dump"], ["decode", "--elf", SAMPLE_ELF], ["dump", "--format", "ptdump"]):
        label = " ".join(c for c in cmd if c != SAMPLE_ELF)
        rejected(f"{label}: empty file", cmd + [empty], 1, empty)
        rejected(f"{label}: missing file", cmd + [missing], 1, missing, must_mention=None)
        if "ptdump" not in cmd:  # libipt's ptdump lists nothing and succeeds; its format does the same
            rejected(f"{label}: random bytes", cmd + [noise], 1, noise)
    rejected("decode --format ptxed: empty file", ["decode", "--format", "ptxed", "--pt", empty,
                                                  "--elf", SAMPLE_ELF], 1, empty)

    # Bad option values are usage errors (exit 2) that name the option.
    rejected("decode --cpu foo", ["decode", SAMPLE_PT, "--elf", SAMPLE_ELF, "--cpu", "foo"], 2, "--cpu", None)
    rejected("dump --mtc-freq 99", ["dump", SAMPLE_PT, "--mtc-freq", "99"], 2, "--mtc-freq", None)
    rejected("decode --format bogus", ["decode", SAMPLE_PT, "--format", "bogus"], 2, "--format", None)
    rejected("decode --raw without address", ["decode", SAMPLE_PT, "--raw", SAMPLE_ELF], 2, "--raw", None)

    # A missing image is bad input naming the image file.
    rejected("decode: missing image", ["decode", SAMPLE_PT, "--elf", missing], 1, missing, None)
    rejected("decode: image that is not ELF", ["decode", SAMPLE_PT, "--elf", noise], 1, noise, None)

    # Images that do not cover the code: the flow becomes gaps, never a crash.
    out, records = jsonl(["decode", SAMPLE_PT, "--format", "jsonl", "--raw", f"{SAMPLE_ELF}:0x900000"])
    gaps = [r for r in records if r.get("event") == "gap"]
    report("decode: code not in any image gives no_image gaps",
           None if out.returncode == 0 and gaps and all(g["reason"] == "no_image" for g in gaps)
           else f"status {out.returncode}, gaps {gaps[:2]}")

    # Damage in the middle: decode up to it, report a gap at its offset, resynchronise after it.
    damaged = bytearray(sample)
    damaged[60:64] = b"\x02\xff\x02\xff"  # an undefined extended opcode
    damaged_pt = path("damaged.pt", bytes(damaged))
    for mode in ("--blocks", "--insn"):
        out, records = jsonl(["decode", damaged_pt, "--elf", SAMPLE_ELF, mode, "--format", "jsonl"])
        gap_at = [i for i, r in enumerate(records) if r.get("event") == "gap"]
        flow = [i for i, r in enumerate(records) if "insns" in r or "size" in r]
        ok = out.returncode == 0 and gap_at and flow and flow[0] < gap_at[0] < flow[-1]
        report(f"decode {mode}: damaged trace decodes around a gap",
               None if ok else f"status {out.returncode}, gap indices {gap_at[:3]}, {len(flow)} flow records")
        if gap_at:
            offset = records[gap_at[0]].get("offset")
            report(f"decode {mode}: the gap names the damaged offset",
                   None if offset is not None and 56 <= offset <= 64 else f"gap offset {offset}")
    out, records = jsonl(["dump", damaged_pt, "--format", "jsonl"])
    gap_at = [i for i, r in enumerate(records) if r.get("event") == "gap"]
    report("dump: damaged trace lists packets around a gap",
           None if out.returncode == 0 and gap_at and 0 < gap_at[0] < len(records) - 1
           else f"status {out.returncode}, gaps at {gap_at}")

    # Truncated in the middle of a packet: everything before it, then a truncation gap.
    truncated = path("truncated.pt", sample[:150])  # cuts the last PSB (at 0x8f) short
    out, records = jsonl(["dump", truncated, "--format", "jsonl"])
    last = records[-1] if records else {}
    report("dump: truncated packet is reported",
           None if out.returncode == 0 and last.get("event") == "gap" and last.get("reason") == "truncated"
           else f"status {out.returncode}, last record {last}")
    out, records = jsonl(["decode", truncated, "--elf", SAMPLE_ELF, "--format", "jsonl"])
    truncation = [r for r in records if r.get("event") == "gap" and r.get("reason") == "truncated"]
    report("decode: truncated packet is reported",
           None if out.returncode == 0 and truncation and truncation[0].get("offset") == 0x8f
           else f"status {out.returncode}, truncation gaps {truncation}")

TALLY.finish()
