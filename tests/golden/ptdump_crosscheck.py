#!/usr/bin/env python3
"""Byte-exact cross-check of `ptprof dump --format ptdump` against a real ptdump 2.0.5 binary.

The stored expectations (ptdump_conformance.py) cover the options libipt's own tests use. This
script goes further when a reference ptdump is at hand: every PT input of the shared test data
under many option combinations, plus damaged copies of the real traces (cut, bit flips, random
bytes; fixed seed), must give exactly ptdump's stdout. It needs $PTDUMP_REFERENCE (a ptdump built
from libipt's v2.0.5 tag; libipt does not ship it in Debian) and SKIPs (exit 77) without it.

  PTDUMP_REFERENCE=/path/to/ptdump PTPROF=build/ptprof SHARED_TESTDATA=../shared/testdata \\
      python3 tests/golden/ptdump_crosscheck.py [--damaged N]
"""

import argparse
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

TIMING_SKL = ["--cpu", "6/78/3", "--mtc-freq", "3", "--nom-freq", "12",
              "--cpuid-0x15.eax", "2", "--cpuid-0x15.ebx", "100"]
TIMING_SKX = ["--cpu", "6/85/4", "--mtc-freq", "3", "--nom-freq", "37",
              "--cpuid-0x15.eax", "2", "--cpuid-0x15.ebx", "308"]

OPTION_SETS = [
    [],
    ["--raw"],
    ["--lastip", "--exec-mode"],
    ["--no-offset", "--raw", "--lastip"],
    ["--time"] + TIMING_SKL,
    ["--time", "--time-delta"] + TIMING_SKL,
    ["--tcal"] + TIMING_SKL,
    ["--tcal", "--time-delta"] + TIMING_SKX,
    ["--time", "--no-tcal"] + TIMING_SKX,
    ["--time", "--no-wall-clock", "--mtc-freq", "3", "--cpuid-0x15.eax", "2",
     "--cpuid-0x15.ebx", "308"],
    ["--time", "--time-delta", "--no-cyc", "--mtc-freq", "3", "--nom-freq", "37",
     "--cpuid-0x15.eax", "2", "--cpuid-0x15.ebx", "308"],
    ["--time"],
    ["--tcal"],
    ["--quiet", "--time"],
    ["--no-sync"],
    ["--no-pad", "--no-timing"],
    ["--no-sync", "--tcal", "--time-delta", "--cpu", "6/78", "--mtc-freq", "9", "--nom-freq", "3",
     "--cpuid-0x15.eax", "1", "--cpuid-0x15.ebx", "4"],
]


def run(command, cwd):
    result = subprocess.run(command, cwd=cwd, capture_output=True, timeout=120)
    return result.stdout


def inputs(root):
    real = [root / "dynamorio/clients/drcachesim/drpt2trace/test_simple.raw/pt.bin"]
    real += sorted((root / "perf_data_converter/aux-extracted").glob("*.bin"))
    synthetic = sorted((root / "libipt/generated").glob("**/*.pt"))
    return [p for p in real if p.exists()], synthetic


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--damaged", type=int, default=300, help="damaged inputs to try")
    parser.add_argument("--seed", type=int, default=20261122)
    args = parser.parse_args()

    reference = os.environ.get("PTDUMP_REFERENCE")
    ptprof = os.environ.get("PTPROF")
    root = Path(os.environ.get("SHARED_TESTDATA", ""))
    if not reference or not Path(reference).exists():
        print("SKIP: set PTDUMP_REFERENCE to a ptdump 2.0.5 binary to run this cross-check")
        return 77
    if not os.environ.get("SHARED_TESTDATA") or not root.is_dir():
        print("SKIP: shared test data not found at '%s'" % root)
        return 77

    real, synthetic = inputs(root)
    passed = failed = 0

    def compare(name, options, path):
        nonlocal passed, failed
        expected = run([reference] + options + [str(path)], path.parent)
        actual = run([ptprof, "dump", "--format", "ptdump"] + options + [str(path)], path.parent)
        if expected == actual:
            passed += 1
            return
        failed += 1
        for number, (e, a) in enumerate(zip(expected.splitlines(), actual.splitlines()), 1):
            if e != a:
                print("FAIL %s %s: line %d: expected %r, got %r"
                      % (name, " ".join(options), number, e.decode(errors="replace"),
                         a.decode(errors="replace")))
                break
        else:
            print("FAIL %s %s: output lengths differ" % (name, " ".join(options)))

    for options in OPTION_SETS:
        for path in real + synthetic:
            compare(path.name, options, path)

    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as scratch:
        damaged_path = Path(scratch) / "damaged.pt"
        for number in range(args.damaged if real else 0):
            data = bytearray(rng.choice(real).read_bytes())
            start = rng.randrange(0, max(1, len(data) - 64))
            data = data[start:start + rng.randrange(64, 3000)]
            for _ in range(rng.randrange(0, 12)):
                i = rng.randrange(len(data))
                data[i] = rng.randrange(256) if rng.random() < 0.5 else data[i] ^ (1 << rng.randrange(8))
            damaged_path.write_bytes(bytes(data))
            compare("damaged#%d" % number, rng.choice(OPTION_SETS), damaged_path)

    print("%d passed, %d failed, 0 skipped" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
