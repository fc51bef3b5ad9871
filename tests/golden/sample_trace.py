#!/usr/bin/env python3
"""End-to-end check of ptprof's own sample trace and of the recorder that made it.

1. traces/sample/sample.pt decodes (instruction flow, JSONL) to exactly the instruction addresses
   that single-stepping the program observed (traces/sample/sample.ips), with both decoders; so
   does traces/sample/sample.ptar (the README's sample: the program recorded under QEMU by
   `ptprof record --backend qemu`, with the program inside for symbols).
2. Recording the freshly built sample program again and decoding that trace gives the recording's
   own address list (the recorder and the decoder agree on a new run, not only on the stored one).
3. The text outputs in traces/sample/expected/ are reproduced exactly (tools/update_goldens.sh
   regenerates them; review the diff).
"""
import json
import os
import subprocess
import sys
import tempfile

PTPROF = os.environ["PTPROF"]
ROOT = os.environ["SOURCE_ROOT"]
BUILD = os.path.dirname(PTPROF)
SAMPLE = os.path.join(ROOT, "traces", "sample")

from tally import Tally

TALLY = Tally()
report, skip, check = TALLY.report, TALLY.skip, TALLY.check



def decoded_ips(trace, elf, extra=()):
    out = subprocess.run([PTPROF, "decode", "--insn", "--format", "jsonl", trace, "--elf", elf, *extra],
                         capture_output=True, text=True)
    if out.returncode != 0:
        return None, out.stderr.strip()
    ips = []
    for line in out.stdout.splitlines():
        record = json.loads(line)
        if "size" in record:
            ips.append(int(record["ip"], 16))
    return ips, ""


def read_ips(path):
    with open(path) as f:
        return [int(line, 16) for line in f if line.strip()]


expected = read_ips(os.path.join(SAMPLE, "sample.ips"))
trace = os.path.join(SAMPLE, "sample.pt")
elf = os.path.join(SAMPLE, "sample")
ips, err = decoded_ips(trace, elf)
if ips is None:
    check("stored trace, instruction flow", False, err)
else:
    first = next((i for i, (a, b) in enumerate(zip(ips, expected)) if a != b), None)
    check("stored trace, instruction flow", ips == expected,
          f"{len(ips)} instructions decoded, {len(expected)} expected; first difference at #{first}")

# The README's sample: the same program recorded under QEMU (ptprof record --backend qemu), the
# program inside the archive: decodes to the single-stepped addresses, with symbols.
out = subprocess.run([PTPROF, "decode", "--insn", "--format", "jsonl",
                      os.path.join(SAMPLE, "sample.ptar")], capture_output=True, text=True)
ptar_ips = [int(json.loads(l)["ip"], 16) for l in out.stdout.splitlines() if '"size"' in l]
check("recorded archive (sample.ptar), instruction flow == single-step addresses",
      out.returncode == 0 and ptar_ips == expected,
      out.stderr.strip() or f"{len(ptar_ips)} decoded, {len(expected)} expected")
out = subprocess.run([PTPROF, "decode", "--summary", os.path.join(SAMPLE, "sample.ptar")],
                     capture_output=True, text=True)
check("recorded archive (sample.ptar), symbols from the stored program",
      out.returncode == 0 and "<fib" in out.stdout and "<triangle" in out.stdout, out.stderr.strip())


def block_problem(blocks, ips):
    """Blocks must tile the instruction sequence: each starts and ends where the next slice does."""
    index = 0
    for n, b in enumerate(blocks):
        first, last, count = int(b["first_ip"], 16), int(b["last_ip"], 16), b["insns"]
        if index + count > len(ips):
            return f"block #{n} runs past the {len(ips)} expected instructions"
        if ips[index] != first or ips[index + count - 1] != last:
            return f"block #{n} {first:#x}..{last:#x} does not match instructions #{index}..#{index + count - 1}"
        index += count
    return None if index == len(ips) else f"blocks cover {index} of {len(ips)} instructions"


out = subprocess.run([PTPROF, "decode", "--blocks", "--format", "jsonl", trace, "--elf", elf],
                     capture_output=True, text=True)
blocks = [json.loads(line) for line in out.stdout.splitlines()]
blocks = [b for b in blocks if "first_ip" in b]
problem = block_problem(blocks, expected) if out.returncode == 0 else out.stderr.strip()
check("stored trace, block flow tiles the instruction flow", problem is None, problem)

recorder = os.path.join(BUILD, "tools", "make_sample_trace")
program = os.path.join(BUILD, "tools", "sample")
with tempfile.TemporaryDirectory() as tmp:
    new_trace = os.path.join(tmp, "new.pt")
    new_ips = os.path.join(tmp, "new.ips")
    rec = subprocess.run([recorder, "-o", new_trace, "--ips", new_ips, "--psb-period", "64", "--", program],
                         capture_output=True, text=True)
    if rec.returncode != 0:
        check("fresh recording", False, rec.stderr.strip())
    else:
        ips, err = decoded_ips(new_trace, program)
        want = read_ips(new_ips)
        check("fresh recording decodes to its own address list", ips == want,
              err or f"{len(ips)} decoded, {len(want)} recorded")
        check("fresh recording has the stored run's length", len(want) == len(expected),
              f"{len(want)} vs {len(expected)}")

expected_dir = os.path.join(SAMPLE, "expected")
if os.path.isdir(expected_dir):
    with open(os.path.join(expected_dir, "commands.txt")) as f:
        commands = [line.rstrip("\n") for line in f if line.strip() and not line.startswith("#")]
    for line in commands:
        name, args = line.split("\t", 1)
        out = subprocess.run([PTPROF, *args.split()], cwd=ROOT, capture_output=True, text=True)
        with open(os.path.join(expected_dir, name)) as f:
            want = f.read()
        got = out.stdout
        if got != want:
            diff = next((f"line {i + 1}: got {a!r}, expected {b!r}"
                         for i, (a, b) in enumerate(zip(got.splitlines(), want.splitlines())) if a != b),
                        f"{len(got.splitlines())} lines, expected {len(want.splitlines())}")
            check(f"golden {name}", False, diff)
        else:
            check(f"golden {name}", out.returncode == 0, f"exit status {out.returncode}")

TALLY.finish()
