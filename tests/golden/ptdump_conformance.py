#!/usr/bin/env python3
"""ptdump conformance: `ptprof dump --format ptdump` against libipt 2.0.5's ptdump.

Runs three data sets from $SHARED_TESTDATA (see its INDEX.md):
  libipt      every row of libipt/generated/MANIFEST.tsv: the row's ptdump command line with
              `ptdump` replaced by `$PTPROF dump --format ptdump`, run in the row's directory,
              against the row's <test>-ptdump*.exp;
  dynamorio   the real Skylake trace test_simple.raw/pt.bin against ptdump 2.0.5's listing;
  perf        the AUX streams cut out of perf.data.intel_pt-4.14 against ptdump 2.0.5's listings;
  jsonl       ptprof's own `dump --format jsonl` on the same inputs (plain listings only): the
              offset, name and payload of every packet, and every gap record, must agree with the
              ptdump reference line for line.
It also checks the command-line contract of `ptprof dump` on tiny made-up inputs (exit status
and the one-line error of empty, missing, PSB-less and damaged traces, of truncated or missing
perf sideband files, usage errors such as bad --pevent:* values).
Outputs are compared the way libipt's test script compares them (`diff -ub`): runs of blanks and
trailing blanks do not matter. Prints one line per failing case with the first differences, then a
summary; exits 0 only when every case passes, 77 (skip) when the test data is absent.
"""

import difflib
import json
import lzma
import os
import re
import shlex
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

from libipt_manifest import manifest_rows

# Known exceptions: cases not run, with the reason. Keep this list short (it is empty now).
def known_exception(test, command):
    """The reason a case is not run, or None."""
    return None


DYNAMORIO_OPTIONS = ["--cpu", "6/85/4", "--mtc-freq", "3", "--nom-freq", "37",
                     "--cpuid-0x15.eax", "2", "--cpuid-0x15.ebx", "308"]
PERF_OPTIONS = ["--cpu", "6/78/3", "--mtc-freq", "3", "--nom-freq", "12",
                "--cpuid-0x15.eax", "2", "--cpuid-0x15.ebx", "100"]

BLANKS = re.compile(r"[ \t]+")


def normalise(text):
    """Lines with blank runs collapsed and trailing blanks removed (diff -b semantics)."""
    return [BLANKS.sub(" ", line).rstrip(" ") for line in text.splitlines()]


class Tally:
    def __init__(self):
        self.counts = {}

    def add(self, dataset, outcome):
        self.counts.setdefault(dataset, {"passed": 0, "failed": 0, "skipped": 0})
        self.counts[dataset][outcome] += 1

    def total(self, outcome):
        return sum(c[outcome] for c in self.counts.values())


def run_ptprof(ptprof, args, cwd):
    command = [ptprof, "dump", "--format", "ptdump"] + args
    try:
        result = subprocess.run(command, cwd=cwd, capture_output=True, timeout=120)
    except subprocess.TimeoutExpired:
        return None, "timed out"
    output = result.stdout.decode("utf-8", errors="replace")
    if result.returncode != 0:
        return output, "exit status %d: %s" % (
            result.returncode, result.stderr.decode("utf-8", errors="replace").strip())
    return output, None


def compare(actual, expected):
    """None when equal under diff -b, else a short unified diff."""
    a, e = normalise(actual), normalise(expected)
    if a == e:
        return None
    diff = list(difflib.unified_diff(e, a, "expected", "ptprof", n=0, lineterm=""))
    shown = [line for line in diff[2:] if not line.startswith("@@")][:6]
    return " | ".join(shown) + (" ..." if len(diff) > 8 else "")


def check(tally, dataset, name, ptprof, args, cwd, expected):
    output, error = run_ptprof(ptprof, args, cwd)
    difference = compare(output or "", expected) if output is not None else error
    if difference is None:
        tally.add(dataset, "passed")
        return
    if error and output is not None:
        difference = error + "; " + (difference or "")
    tally.add(dataset, "failed")
    print("FAIL %s %s: %s" % (dataset, name, difference))


def jsonl_as_ptdump(output):
    """The JSONL listing rewritten as the plain ptdump lines it must agree with."""
    lines = []
    for line in output.splitlines():
        record = json.loads(line)
        if record.get("event") == "gap":
            lines.append("[%x: error decoding packet: %s]" % (record["offset"], record["detail"]))
        else:
            text = "%016x %s %s" % (record["offset"], record["packet"], record["payload"])
            # ptdump's tracking column for PIP and VMCS.
            if "cr3" in record:
                text += " cr3 %016x" % int(record["cr3"], 16)
            if "vmcs" in record:
                text += " vmcs %016x" % int(record["vmcs"], 16)
            lines.append(text)
    return "\n".join(lines)


def check_jsonl(tally, name, ptprof, args, cwd, expected):
    """ptprof's JSONL listing against a plain ptdump listing (errata notes left out)."""
    command = [ptprof, "dump", "--format", "jsonl"] + args
    result = subprocess.run(command, cwd=cwd, capture_output=True, timeout=120)
    expected = "\n".join(line for line in expected.splitlines()
                         if not line.startswith("[0: failed to determine errata"))
    if result.returncode != 0:
        # Without any PSB ptdump lists nothing; ptprof reports bad input.
        if not expected.strip() and result.returncode == 1:
            tally.add("jsonl", "passed")
            return
        tally.add("jsonl", "failed")
        print("FAIL jsonl %s: exit status %d: %s" % (name, result.returncode,
                                                   result.stderr.decode(errors="replace").strip()))
        return
    try:
        actual = jsonl_as_ptdump(result.stdout.decode("utf-8"))
    except (ValueError, KeyError) as error:
        tally.add("jsonl", "failed")
        print("FAIL jsonl %s: bad JSONL: %s" % (name, error))
        return
    difference = compare(actual, expected)
    if difference is None:
        tally.add("jsonl", "passed")
    else:
        tally.add("jsonl", "failed")
        print("FAIL jsonl %s: %s" % (name, difference))


def is_plain_listing(args):
    """True when ptdump's options only select the CPU, which leaves the listing plain."""
    rest = list(args)
    while rest[:1] == ["--cpu"]:
        rest = rest[2:]
    return len(rest) == 1


def run_libipt(tally, ptprof, root):
    base = root / "libipt"
    manifest = base / "generated" / "MANIFEST.tsv"
    if not manifest.exists():
        print("SKIP libipt: %s is missing" % manifest)
        return
    for row in manifest_rows(manifest):
        command = shlex.split(row["ptdump_cmd"])
        name = "%s [%s]" % (row["test"], row["cpu"])
        reason = known_exception(row["test"], command)
        if reason:
            tally.add("libipt", "skipped")
            print("SKIP libipt %s: %s" % (name, reason))
            continue
        directory = base / row["dir"]
        expectations = sorted(directory.glob(row["test"] + "-ptdump*.exp"))
        if len(expectations) != 1:
            tally.add("libipt", "failed")
            print("FAIL libipt %s: expected one ptdump .exp in %s, found %d"
                  % (name, directory, len(expectations)))
            continue
        expected = expectations[0].read_text()
        check(tally, "libipt", name, ptprof, command[1:], directory, expected)
        if is_plain_listing(command[1:]):
            check_jsonl(tally, "libipt " + name, ptprof, command[1:], directory, expected)


def run_dynamorio(tally, ptprof, root):
    trace = root / "dynamorio/clients/drcachesim/drpt2trace/test_simple.raw/pt.bin"
    reference = root / "dynamorio/reference-libipt-2.0.5/pt.bin.ptdump.txt"
    if not trace.exists() or not reference.exists():
        print("SKIP dynamorio: %s or %s is missing" % (trace, reference))
        return
    expected = reference.read_text()
    # The reference was made with the documented decode parameters; without them the plain
    # listing is the same (they only matter for --time/--tcal), so check both spellings.
    check(tally, "dynamorio", "pt.bin (with parameters)", ptprof,
          DYNAMORIO_OPTIONS + [str(trace)], trace.parent, expected)
    check(tally, "dynamorio", "pt.bin (no parameters)", ptprof, [str(trace)], trace.parent,
          expected)
    check_jsonl(tally, "dynamorio pt.bin", ptprof, DYNAMORIO_OPTIONS + [str(trace)], trace.parent,
                expected)


def run_perf(tally, ptprof, root):
    streams = sorted((root / "perf_data_converter/aux-extracted").glob("*.bin"))
    references = root / "perf_data_converter/reference-libipt-2.0.5-ptdump"
    if not streams:
        print("SKIP perf: no AUX streams in %s" % (root / "perf_data_converter/aux-extracted"))
        return
    for stream in streams:
        reference = references / (stream.name[:-len(".bin")] + ".ptdump.txt.xz")
        if not reference.exists():
            tally.add("perf", "failed")
            print("FAIL perf %s: reference %s is missing" % (stream.name, reference))
            continue
        expected = lzma.decompress(reference.read_bytes()).decode("utf-8", errors="replace")
        check(tally, "perf", stream.name, ptprof, PERF_OPTIONS + [str(stream)], stream.parent,
              expected)
        check_jsonl(tally, "perf " + stream.name, ptprof, PERF_OPTIONS + [str(stream)],
                    stream.parent, expected)


PSB = bytes([0x02, 0x82] * 8)
PSBEND = bytes([0x02, 0x23])
BAD_OPCODE = bytes([0x02, 0x00])
# PERF_RECORD_LOST (type 2, misc 0, size 32): id 1, lost 2, and the time sample 3.
LOST_RECORD = struct.pack("<IHH", 2, 0, 32) + struct.pack("<QQQ", 1, 2, 3)


def run_cli(tally, ptprof):
    """Exit status, stderr and gap records of `ptprof dump` on small inputs."""
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        files = {
            "empty": b"",
            "zeros": bytes(64),
            "damaged": PSB + PSBEND + BAD_OPCODE + PSB + PSBEND,
            # A perf LOST record (sample type TIME: 32 bytes), then one cut short at offset 0x20.
            "cut.sb": LOST_RECORD + LOST_RECORD[:20],
        }
        for name, data in files.items():
            (scratch / name).write_bytes(data)
        cases = [
            # (name, arguments, exit status, text expected in stderr, text expected in stdout)
            ("empty file", ["dump", "empty"], 1, "empty: offset 0x0: empty file", ""),
            ("missing file", ["dump", "missing"], 1, "ptprof: missing: cannot open", ""),
            ("no PSB", ["dump", "zeros"], 1, "zeros: offset 0x0: no PSB found", ""),
            ("damaged, jsonl", ["dump", "--format", "jsonl", "damaged"], 0, "1 decode error",
             '{"offset":18,"event":"gap","reason":"desync","detail":"unknown opcode"}'),
            ("damaged, text", ["dump", "damaged"], 0, "1 decode error",
             "0000000000000012  [gap: desync: unknown opcode]"),
            ("damaged, ptdump", ["dump", "--format", "ptdump", "damaged"], 0, "",
             "[12: error decoding packet: unknown opcode]"),
            ("bad format", ["dump", "--format", "xml", "damaged"], 2, "xml", ""),
            ("bad mtc-freq", ["dump", "--mtc-freq", "99", "damaged"], 2, "--mtc-freq", ""),
            ("bad sideband option value", ["dump", "--format", "ptdump", "--pevent:time-mult", "0",
                                           "--pevent:primary", "sb", "damaged"], 2,
             "--pevent:time-mult", ""),
            ("missing sideband value", ["dump", "--format", "ptdump", "--pevent:primary"], 2,
             "--pevent:primary: missing argument", ""),
            ("truncated sideband file", ["dump", "--format", "ptdump", "--sb", "--pevent:sample-type",
                                         "0x4", "--pevent:primary", "cut.sb", "damaged"], 1,
             "cut.sb: offset 0x20:", ""),
            ("missing sideband file", ["dump", "--format", "ptdump", "--pevent:primary", "nosuch.sb",
                                       "damaged"], 1, "nosuch.sb", ""),
            ("time and tcal", ["dump", "--format", "ptdump", "--time", "--tcal", "damaged"], 2,
             "--time or --tcal", ""),
            ("ptdump help", ["dump", "--format", "ptdump", "--help"], 0, "", "--no-wall-clock"),
        ]
        for name, args, status, stderr_text, stdout_text in cases:
            result = subprocess.run([ptprof] + args, cwd=scratch, capture_output=True, timeout=60)
            stderr = result.stderr.decode(errors="replace")
            stdout = result.stdout.decode(errors="replace")
            problems = []
            if result.returncode != status:
                problems.append("exit status %d, expected %d" % (result.returncode, status))
            if stderr_text not in stderr:
                problems.append("stderr %r lacks %r" % (stderr.strip(), stderr_text))
            if stdout_text not in stdout:
                problems.append("stdout lacks %r" % stdout_text)
            if status == 1 and len(stderr.strip().splitlines()) != 1:
                problems.append("expected one line on stderr, got %r" % stderr.strip())
            if problems:
                tally.add("cli", "failed")
                print("FAIL cli %s: %s" % (name, "; ".join(problems)))
            else:
                tally.add("cli", "passed")


def summarise(tally):
    for dataset, counts in tally.counts.items():
        print("%s: %d passed, %d failed, %d skipped"
              % (dataset, counts["passed"], counts["failed"], counts["skipped"]))
    print("%d passed, %d failed, %d skipped"
          % (tally.total("passed"), tally.total("failed"), tally.total("skipped")))


def main():
    ptprof = os.environ.get("PTPROF")
    root = Path(os.environ.get("SHARED_TESTDATA", ""))
    if not ptprof:
        print("PTPROF is not set")
        return 2
    tally = Tally()
    run_cli(tally, ptprof)
    if not os.environ.get("SHARED_TESTDATA") or not root.is_dir():
        summarise(tally)
        if tally.total("failed"):
            return 1
        print("SKIP: shared test data not found at '%s'" % root)
        return 77
    run_libipt(tally, ptprof, root)
    run_dynamorio(tally, ptprof, root)
    run_perf(tally, ptprof, root)
    summarise(tally)
    return 0 if tally.total("failed") == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
