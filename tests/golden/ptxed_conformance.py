#!/usr/bin/env python3
"""ptxed conformance: `ptprof decode --format ptxed` against libipt 2.0.5's ptxed.

Data sets from $SHARED_TESTDATA (see its INDEX.md):
  libipt      every row of libipt/generated/MANIFEST.tsv whose ptxed_check is `pass`: the row's
              ptxed command with `ptxed` replaced by `$PTPROF decode --format ptxed`, run in the
              row's directory, against the row's <test>-ptxed*.exp (the pevent-* rows with their
              perf sideband files, --pevent:* and --sb:*);
  model       the same rows decoded natively (`ptprof decode --insn` and `--blocks`, JSONL, i.e.
              through the model's events): with --insn, the sequence of instructions, events and
              gaps must be the one ptxed lists (ptxed's `[interrupt]` is no event in the model: it
              ends the interrupted block); with --blocks, the blocks expanded with the
              instruction sizes must give ptxed's instruction addresses; for rows run with
              --quiet, the instruction count must match ptxed's `insn:` line;
  sideband-errors  a truncated or missing --pevent file and bad --pevent:* values: exit status
              and one line on stderr naming the file and offset, or the option;
  dynamorio   the real Skylake trace test_simple.raw/pt.bin with its program `hello`, loaded as an
              ELF and as a raw code segment, against ptxed 2.0.5's listings in
              dynamorio/reference-libipt-2.0.5/ (with disassembly, and with --time/--stat).
Comparison follows libipt's own test script (`diff -ub`): runs of blanks and trailing blanks are
not significant. Prints each failing case with a short diff, then per-set and overall summaries
`N passed, N failed, N skipped`; exits 0 only when nothing failed, 77 (skip) without test data.
"""

import difflib
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

from libipt_manifest import manifest_rows

# Cases we do not run, with the reason. Keep this list short.
# The native decoder takes its sideband from perf.data (or a .ptar), not from libipt's pevent
# files: the pevent rows' code comes from sections their mmap records name, so only the ptxed
# compatibility mode can decode them (checked by the libipt data set).
NATIVE_SIDEBAND_REASON = "native decode reads sideband from perf.data, not from libipt's --pevent files"


def known_exception(command):
    return None


def native_exception(command):
    if any(arg.startswith(("--pevent", "--sb")) for arg in command):
        return NATIVE_SIDEBAND_REASON
    return None


SKYLAKE_PARAMETERS = ["--cpu", "6/85/4", "--mtc-freq", "3", "--nom-freq", "37",
                      "--cpuid-0x15.eax", "2", "--cpuid-0x15.ebx", "308"]
# hello's only executable PT_LOAD segment: file bytes 0x1000-0x1027 at 0x401000.
SKYLAKE_RAW_CODE = "hello:0x1000-0x1027:0x401000"
SKYLAKE_CASES = [
    ("pt.bin.ptxed-elf.txt", "elf", ["--elf", "hello"] + SKYLAKE_PARAMETERS + ["--pt", "pt.bin"]),
    ("pt.bin.ptxed-raw.txt", "raw",
     ["--raw", SKYLAKE_RAW_CODE] + SKYLAKE_PARAMETERS + ["--pt", "pt.bin"]),
    ("pt.bin.ptxed-elf-time-stat.txt", "elf, --time --event:time --stat",
     ["--elf", "hello"] + SKYLAKE_PARAMETERS +
     ["--block-decoder", "--time", "--event:time", "--stat", "--stat:insn", "--stat:blocks",
      "--pt", "pt.bin"]),
]

BLANKS = re.compile(r"[ \t]+")


def normalise(text):
    return [BLANKS.sub(" ", line).rstrip(" ") for line in text.splitlines()]


def short_diff(actual, expected):
    a, e = normalise(actual), normalise(expected)
    if a == e:
        return None
    diff = [line for line in difflib.unified_diff(e, a, "expected", "ptprof", n=0, lineterm="")
            if not line.startswith(("@@", "---", "+++"))]
    return "\n    ".join(diff[:8]) + ("\n    ..." if len(diff) > 8 else "")


class Tally:
    def __init__(self):
        self.counts = {}

    def add(self, dataset, outcome):
        self.counts.setdefault(dataset, {"passed": 0, "failed": 0, "skipped": 0})[outcome] += 1

    def total(self, outcome):
        return sum(c[outcome] for c in self.counts.values())


def run_case(tally, dataset, name, ptprof, args, cwd, expected):
    command = [ptprof, "decode", "--format", "ptxed"] + args
    try:
        result = subprocess.run(command, cwd=cwd, capture_output=True, timeout=120)
    except subprocess.TimeoutExpired:
        tally.add(dataset, "failed")
        print("FAIL %s %s: timed out" % (dataset, name))
        return
    output = result.stdout.decode("utf-8", errors="replace")
    problem = short_diff(output, expected)
    if result.returncode != 0:
        problem = "exit status %d: %s%s" % (
            result.returncode, result.stderr.decode("utf-8", errors="replace").strip(),
            ("\n    " + problem) if problem else "")
    if problem is None:
        tally.add(dataset, "passed")
        return
    tally.add(dataset, "failed")
    print("FAIL %s %s (%s):\n    %s" % (dataset, name, " ".join(shlex.quote(a) for a in args),
                                       problem))


def run_libipt(tally, ptprof, root):
    base = root / "libipt"
    manifest = base / "generated" / "MANIFEST.tsv"
    if not manifest.exists():
        print("SKIP libipt: %s is missing" % manifest)
        return
    for row in manifest_rows(manifest):
        if row.get("ptxed_check") != "pass":
            continue
        command = shlex.split(row["ptxed_cmd"])
        name = "%s [%s]" % (row["test"], row["cpu"])
        reason = known_exception(command)
        if reason:
            tally.add("libipt", "skipped")
            print("SKIP libipt %s: %s" % (name, reason))
            continue
        directory = base / row["dir"]
        expectations = sorted(directory.glob(row["test"] + "-ptxed*.exp"))
        if len(expectations) != 1:
            tally.add("libipt", "failed")
            print("FAIL libipt %s: expected one ptxed .exp in %s, found %d"
                  % (name, directory, len(expectations)))
            continue
        run_case(tally, "libipt", name, ptprof, command[1:], directory,
                 expectations[0].read_text())


# ptxed options that carry over to the native command, with the number of values they take.
NATIVE_OPTIONS = {"--event:tick": 0, "--raw": 1, "--elf": 1, "--cpu": 1, "--pt": 1, "--mtc-freq": 1, "--nom-freq": 1,
                  "--cpuid-0x15.eax": 1, "--cpuid-0x15.ebx": 1}
FILTER_OPTION = re.compile(r"--filter:addr([0-3])_(cfg|a|b)$")
LISTED_INSN = re.compile(r"^(\? )?([0-9a-f]{16})$")
INSN_STAT = re.compile(r"^insn:\s+(\d+)\.$", re.M)


def native_args(command):
    """The native `ptprof decode` arguments equivalent to a ptxed command line."""
    args, filters, i = [], {}, 1
    while i < len(command):
        arg = command[i]
        match = FILTER_OPTION.match(arg)
        if match:
            filters.setdefault(int(match.group(1)), {})[match.group(2)] = command[i + 1]
            i += 2
        elif arg == "--event:tick":
            args.append("--ticks")
            i += 1
        elif arg in NATIVE_OPTIONS:
            args += command[i:i + 1 + NATIVE_OPTIONS[arg]]
            i += 1 + NATIVE_OPTIONS[arg]
        else:
            i += 1
    for n, f in sorted(filters.items()):
        args += ["--addr-filter", "%d:%s:%s-%s" % (n, f.get("cfg", "0"), f.get("a", "0"),
                                                   f.get("b", "0"))]
    return args


# ptxed's event lines (after the optional time stamp) and the model's JSONL event names.
PTXED_EVENTS = [("enabled", "enabled"), ("resumed", "resumed"), ("disabled", "disabled"),
                ("overflow", "overflow"), ("aborted", "tsx_abort"),
                ("begin transaction", "tsx_begin"), ("committed", "tsx_commit"),
                ("paging", "paging"), ("vmcs", "vmcs"), ("exec mode", "exec_mode"),
                ("stopped", "stop"), ("ptwrite", "ptwrite"), ("mnt", "mnt"), ("exstop", "exstop"),
                ("mwait", "mwait"), ("pwre", "pwre"), ("pwrx", "pwrx"), ("tick", "tick"),
                ("cbr", "cbr")]
PTXED_ERROR = re.compile(r"^\[[0-9a-f?]+, [0-9a-f]+: (error|sync error): ")
PTXED_EVENT = re.compile(r"^\[(?:[0-9a-f]{16}  )*(.*)\]$")


def ptxed_sequence(text):
    """ptxed's listing as tokens: 'insn ADDR', event names, 'gap'."""
    tokens = []
    for line in text.splitlines():
        line = line.strip()
        insn = LISTED_INSN.match(line)
        if insn:
            tokens.append("insn %x" % int(insn.group(2), 16))
        elif PTXED_ERROR.match(line):
            tokens.append("gap")
        elif PTXED_EVENT.match(line):
            body = PTXED_EVENT.match(line).group(1)
            tokens += [name for text, name in PTXED_EVENTS if body.startswith(text)][:1]
    return tokens


def model_sequence(records):
    """The model's JSONL records as the same tokens."""
    tokens = []
    for r in records:
        if "iclass" in r:
            tokens.append("insn %x" % int(r["ip"], 16))
        elif r.get("event") == "gap":
            tokens.append("overflow" if r.get("reason") == "overflow" else "gap")
        elif "event" in r:
            tokens.append(r["event"])
    return tokens


def model_insns(ptprof, args, cwd):
    """(token sequence from --insn, instruction addresses from --insn, from expanded --blocks)."""
    def decode(extra):
        result = subprocess.run([ptprof, "decode", "--format", "jsonl"] + extra + args, cwd=cwd,
                                capture_output=True, timeout=120)
        if result.returncode != 0:
            raise RuntimeError("exit status %d: %s" % (
                result.returncode, result.stderr.decode("utf-8", "replace").strip()))
        return [json.loads(line) for line in result.stdout.decode().splitlines()]
    insn_records = decode(["--insn"])
    sequence = model_sequence(insn_records)
    insns = [r for r in insn_records if "iclass" in r]
    from_insns = [int(r["ip"], 16) for r in insns]
    sizes = {int(r["ip"], 16): r["size"] for r in insns}
    from_blocks = []
    for block in decode(["--blocks"]):
        if "first_ip" not in block:
            continue
        ip = int(block["first_ip"], 16)
        for k in range(block["insns"]):
            from_blocks.append(ip)
            if k + 1 < block["insns"]:
                ip += sizes.get(ip, 0)
        if ip != int(block["last_ip"], 16):
            from_blocks.append("block not contiguous: %s" % block)
    return sequence, from_insns, from_blocks


def run_model(tally, ptprof, root):
    base = root / "libipt"
    manifest = base / "generated" / "MANIFEST.tsv"
    if not manifest.exists():
        return
    for row in manifest_rows(manifest):
        if row.get("ptxed_check") != "pass":
            continue
        command = shlex.split(row["ptxed_cmd"])
        name = "%s [%s]" % (row["test"], row["cpu"])
        reason = native_exception(command)
        if reason:
            tally.add("model", "skipped")
            print("SKIP model %s: %s" % (name, reason))
            continue
        directory = base / row["dir"]
        expectations = sorted(directory.glob(row["test"] + "-ptxed*.exp"))
        if len(expectations) != 1:
            continue  # reported by run_libipt
        expected = expectations[0].read_text()
        args = native_args(command)
        try:
            sequence, from_insns, from_blocks = model_insns(ptprof, args, directory)
        except (RuntimeError, subprocess.TimeoutExpired) as error:
            tally.add("model", "failed")
            print("FAIL model %s (%s): %s" % (name, " ".join(args), error))
            continue
        if "--quiet" in command or "-q" in command:
            stat = INSN_STAT.search(expected)
            want = int(stat.group(1)) if stat else None
            problems = [] if want is None else [
                "%s: %d instructions, ptxed counted %d" % (how, len(got), want)
                for how, got in (("--insn", from_insns), ("--blocks", from_blocks))
                if len(got) != want]
        else:
            want_sequence = ptxed_sequence(expected)
            want = [int(t[5:], 16) for t in want_sequence if t.startswith("insn ")]
            problems = []
            if sequence != want_sequence:
                problems.append("--insn: " + short_diff("\n".join(sequence),
                                                        "\n".join(want_sequence)))
            if from_blocks != want:
                problems.append("--blocks: " + short_diff("\n".join(map(str, from_blocks)),
                                                          "\n".join(map(str, want))))
        if problems:
            tally.add("model", "failed")
            print("FAIL model %s (%s):\n    %s" % (name, " ".join(args), "\n    ".join(problems)))
        else:
            tally.add("model", "passed")


def run_sideband_errors(tally, ptprof, root):
    """Bad sideband input: one line on stderr naming the file and offset, or the option."""
    directory = root / "libipt/generated/pevent-warn"
    sideband = sorted(directory.glob("pevent-warn-pevent-primary*.sb"))
    if not sideband:
        print("SKIP sideband-errors: %s has no sideband file" % directory)
        return
    with tempfile.TemporaryDirectory() as scratch:
        cut = Path(scratch) / "cut.sb"
        cut.write_bytes(sideband[0].read_bytes()[:60])  # ends inside the second record (0x28)
        common = ["--raw", "pevent-warn.bin:0x1000", "--pt", "pevent-warn.pt"]
        cases = [
            ("truncated sideband file", ["--pevent:sample-type", "0x4", "--pevent:primary", str(cut)] + common,
             1, "cut.sb: offset 0x28: "),
            ("missing sideband file", ["--pevent:primary", "nosuch.sb"] + common, 1, "nosuch.sb"),
            ("bad --pevent:time-mult", ["--pevent:time-mult", "0"] + common, 2, "--pevent:time-mult"),
            ("bad --pevent:time-shift", ["--pevent:time-shift", "99"] + common, 2, "--pevent:time-shift"),
        ]
        for name, args, status, text in cases:
            result = subprocess.run([ptprof, "decode", "--format", "ptxed"] + args, cwd=directory,
                                    capture_output=True, timeout=60)
            stderr = result.stderr.decode(errors="replace").strip()
            problems = []
            if result.returncode != status:
                problems.append("exit status %d, expected %d" % (result.returncode, status))
            if text not in stderr or len(stderr.splitlines()) != 1:
                problems.append("stderr %r: expected one line with %r" % (stderr, text))
            if problems:
                tally.add("sideband-errors", "failed")
                print("FAIL sideband-errors %s: %s" % (name, "; ".join(problems)))
            else:
                tally.add("sideband-errors", "passed")


def run_dynamorio(tally, ptprof, root):
    trace_dir = root / "dynamorio/clients/drcachesim/drpt2trace/test_simple.raw"
    references = root / "dynamorio/reference-libipt-2.0.5"
    if not (trace_dir / "pt.bin").exists() or not references.is_dir():
        print("SKIP dynamorio: %s or %s is missing" % (trace_dir / "pt.bin", references))
        return
    for reference, name, args in SKYLAKE_CASES:
        expected = references / reference
        if not expected.exists():
            tally.add("dynamorio", "failed")
            print("FAIL dynamorio %s: reference %s is missing" % (name, expected))
            continue
        run_case(tally, "dynamorio", name, ptprof, args, trace_dir, expected.read_text())


def main():
    ptprof = os.environ.get("PTPROF")
    root = Path(os.environ.get("SHARED_TESTDATA", ""))
    if not ptprof:
        print("PTPROF is not set")
        return 2
    if not os.environ.get("SHARED_TESTDATA") or not root.is_dir():
        print("SKIP: shared test data not found at '%s'" % root)
        return 77
    tally = Tally()
    run_libipt(tally, ptprof, root)
    run_model(tally, ptprof, root)
    run_sideband_errors(tally, ptprof, root)
    run_dynamorio(tally, ptprof, root)
    for dataset, counts in tally.counts.items():
        print("%s: %d passed, %d failed, %d skipped"
              % (dataset, counts["passed"], counts["failed"], counts["skipped"]))
    print("%d passed, %d failed, %d skipped"
          % (tally.total("passed"), tally.total("failed"), tally.total("skipped")))
    return 0 if tally.total("failed") == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
