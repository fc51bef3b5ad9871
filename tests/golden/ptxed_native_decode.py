#!/usr/bin/env python3
"""Native `ptprof decode` on the real Skylake trace (dynamorio test_simple.raw), checked against
libipt 2.0.5's ptxed listing of the same trace: with --insn the JSONL instruction records must be
exactly ptxed's 8 instructions (same IPs, same order), with the image given as an ELF file and as a
raw code segment; with --blocks (the default) the blocks must cover the same instructions and end
in the two syscalls. Also checks the command's error contract (exit 1 with one line naming the
file for bad input, exit 2 for usage errors). Exits 77 (skip) when the test data is absent.
"""

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

PARAMETERS = ["--cpu", "6/85/4", "--mtc-freq", "3", "--nom-freq", "37",
              "--cpuid-0x15.eax", "2", "--cpuid-0x15.ebx", "308"]
IMAGES = {"elf": ["--elf", "hello"], "raw": ["--raw", "hello:0x1000-0x1027:0x401000"]}


class Checker:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, name, ok, detail=""):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
            print("FAIL %s%s" % (name, (": " + detail) if detail else ""))


def run(ptprof, args, cwd):
    result = subprocess.run([ptprof, "decode"] + args, cwd=cwd, capture_output=True, timeout=60)
    return (result.returncode, result.stdout.decode("utf-8", "replace"),
            result.stderr.decode("utf-8", "replace"))


def jsonl(text):
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def main():
    ptprof = os.environ.get("PTPROF")
    root = Path(os.environ.get("SHARED_TESTDATA", ""))
    if not ptprof:
        print("PTPROF is not set")
        return 2
    trace_dir = root / "dynamorio/clients/drcachesim/drpt2trace/test_simple.raw"
    reference = root / "dynamorio/reference-libipt-2.0.5/pt.bin.ptxed-elf.txt"
    if not os.environ.get("SHARED_TESTDATA") or not (trace_dir / "pt.bin").exists() \
            or not reference.exists():
        print("SKIP: Skylake test data not found under '%s'" % root)
        return 77
    ptxed_ips = [int(m.group(1), 16) for m in
                 re.finditer(r"^([0-9a-f]{16})  ", reference.read_text(), re.M)]
    c = Checker()
    c.check("reference has 8 instructions", len(ptxed_ips) == 8, str(len(ptxed_ips)))

    for form, image in IMAGES.items():
        status, out, err = run(ptprof, ["pt.bin"] + image + PARAMETERS +
                               ["--insn", "--format", "jsonl"], trace_dir)
        c.check("%s --insn exit status" % form, status == 0, err.strip())
        records = jsonl(out)
        insns = [r for r in records if "iclass" in r]
        ips = [int(r["ip"], 16) for r in insns]
        c.check("%s --insn: ptxed's instructions" % form, ips == ptxed_ips,
                "got %s" % [hex(ip) for ip in ips])
        c.check("%s --insn: two syscalls" % form,
                [r["iclass"] for r in insns].count("syscall") == 2)
        c.check("%s --insn: sizes" % form,
                [r["size"] for r in insns] == [5, 5, 10, 5, 2, 5, 5, 2])
        events = [r["event"] for r in records if "event" in r]
        c.check("%s --insn: events" % form,
                events == ["enabled", "exec_mode", "disabled", "resumed", "disabled", "resumed",
                           "disabled"], str(events))

        status, out, err = run(ptprof, ["--pt", "pt.bin"] + image + PARAMETERS +
                               ["--format", "jsonl"], trace_dir)
        c.check("%s blocks exit status" % form, status == 0, err.strip())
        blocks = [r for r in jsonl(out) if "first_ip" in r]
        c.check("%s blocks" % form,
                [(b["first_ip"], b["last_ip"], b["insns"], b["exit"]) for b in blocks] ==
                [("0x401000", "0x401019", 5, "syscall"), ("0x40101b", "0x401025", 3, "syscall")],
                str(blocks))

    status, out, err = run(ptprof, ["pt.bin", "--elf", "hello"] + PARAMETERS + ["--insn"],
                           trace_dir)
    c.check("text output has symbols and disassembly",
            status == 0 and "mov rsi, 0x402000" in out and "<_start+0xa>" in out, out)

    # Images overlap in command-line order: the later one wins.
    with tempfile.NamedTemporaryFile(suffix=".bin") as junk:
        junk.write(b"\xcc" * 64)
        junk.flush()
        ips = {}
        for order, args in (("raw first", ["--raw", junk.name + ":0x401000", "--elf", "hello"]),
                            ("elf first", ["--elf", "hello", "--raw", junk.name + ":0x401000"])):
            status, out, err = run(ptprof, ["pt.bin"] + args + PARAMETERS +
                                   ["--insn", "--format", "jsonl"], trace_dir)
            ips[order] = [int(r["ip"], 16) for r in jsonl(out) if "iclass" in r]
        c.check("image order: an ELF given after a raw image hides it", ips["raw first"] == ptxed_ips,
                str(ips["raw first"]))
        c.check("image order: a raw image given after an ELF hides it",
                ips["elf first"] != ptxed_ips, str(ips["elf first"]))

    # Error contract.
    status, out, err = run(ptprof, ["pt.bin", "--elf", "no-such-file"], trace_dir)
    c.check("missing image: exit 1, one line naming it",
            status == 1 and err.count("\n") == 1 and "no-such-file" in err, err)
    with tempfile.NamedTemporaryFile(suffix=".bin") as junk:
        junk.write(b"\x00not a trace\x00" * 4)
        junk.flush()
        status, out, err = run(ptprof, [junk.name, "--elf", "hello"], trace_dir)
        c.check("not a trace: exit 1, file and offset",
                status == 1 and err.startswith("ptprof: %s: offset 0x" % junk.name), err)
    status, out, err = run(ptprof, ["pt.bin", "--insn", "--blocks"], trace_dir)
    c.check("usage error: exit 2", status == 2, "%d %s" % (status, err))

    print("%d passed, %d failed, 0 skipped" % (c.passed, c.failed))
    return 0 if c.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
