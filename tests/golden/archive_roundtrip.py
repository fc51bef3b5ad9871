#!/usr/bin/env python3
"""`ptprof archive` round trip: a .ptar decodes to exactly what the original inputs decode to, after
the binaries are gone; a damaged archive is one clear error naming the member; an existing output
is never overwritten without --force.

Cases: the sample trace (traces/sample) with its ELF copied to a temporary directory and deleted
before decoding; the real Skylake trace from ../shared/testdata/dynamorio (skipped when absent) with
--elf and with --raw images and its timing parameters.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

PTPROF = os.path.abspath(os.environ["PTPROF"])
ROOT = os.environ["SOURCE_ROOT"]
SHARED = os.environ.get("SHARED_TESTDATA", "")
SAMPLE_DIR = os.path.join(ROOT, "traces", "sample")

from tally import Tally

TALLY = Tally()
report, skip, check = TALLY.report, TALLY.skip, TALLY.check




def run(args, cwd=None):
    return subprocess.run([PTPROF, *args], capture_output=True, text=True, timeout=120, cwd=cwd)


DECODE_MODES = [[], ["--format", "jsonl"], ["--insn"], ["--insn", "--format", "jsonl"]]


def decodes(args, cwd=None):
    """The decode output (stdout, stderr, status) for every mode."""
    out = {}
    for mode in DECODE_MODES:
        r = run(["decode", *args, *mode], cwd)
        out[" ".join(mode) or "text"] = (r.returncode, r.stdout, r.stderr)
    return out


def compare(name, original, archived, archive_path):
    for mode, (status, stdout, stderr) in original.items():
        a_status, a_stdout, a_stderr = archived[mode]
        label = f"{name}: decode {mode}"
        if status != 0 or not stdout:
            report(label, f"the original decode failed (status {status}): {stderr.strip()}")
        elif a_status != 0:
            report(label, f"the archive decode failed (status {a_status}): {a_stderr.strip()}")
        elif a_stdout != stdout:
            a_lines, lines = a_stdout.splitlines(), stdout.splitlines()
            first = next((i for i, (x, y) in enumerate(zip(lines, a_lines)) if x != y),
                         min(len(lines), len(a_lines)))
            report(label, f"outputs differ at line {first + 1} ({len(lines)} vs {len(a_lines)} lines)")
        else:
            report(label, None)


def info(archive_path):
    r = run(["info", archive_path, "--format", "json"])
    return json.loads(r.stdout) if r.returncode == 0 else None


def members_start(meta):
    """The size of frame 0 (header and manifest): where the first member starts."""
    return meta["members"][0]["offset"] if meta["members"] else meta["bytes"]


def damage_cases(tmp, archive_path):
    """Truncation and bit flips inside the manifest frame and each member: exit 1, one line naming
    that member ('manifest' for the header frame)."""
    meta = info(archive_path)
    if not meta:
        report("info on the archive", "failed")
        return
    report("info on the archive lists verified members", None if meta.get("verified") else str(meta))
    data = open(archive_path, "rb").read()
    members = [{"name": "manifest", "offset": 0, "packed_size": members_start(meta)}] + meta["members"]
    for member in members:
        middle = member["offset"] + member["packed_size"] // 2
        for kind, damaged in (("truncated", data[:middle]),
                              ("bit-flipped", data[:middle] + bytes([data[middle] ^ 0x10]) + data[middle + 1:])):
            path = os.path.join(tmp, f"{kind}.ptar")
            with open(path, "wb") as f:
                f.write(damaged)
            for cmd in (["decode", path], ["info", path]):
                r = run(cmd)
                lines = r.stderr.strip().splitlines()
                label = f"{cmd[0]}: {kind} archive names member {member['name']}"
                if r.returncode != 1:
                    report(label, f"exit status {r.returncode}: {r.stderr.strip()!r}")
                elif len(lines) != 1:
                    report(label, f"{len(lines)} lines on stderr: {r.stderr.strip()!r}")
                elif f"member '{member['name']}'" not in lines[0] or path not in lines[0]:
                    report(label, f"the line does not name {path} and the member: {lines[0]!r}")
                else:
                    report(label, None)


def overwrite_cases(tmp, args):
    target = os.path.join(tmp, "existing.ptar")
    with open(target, "wb") as f:
        f.write(b"precious")
    r = run(["archive", *args, "-o", target])
    untouched = open(target, "rb").read() == b"precious"
    report("archive: an existing output is not overwritten",
           None if r.returncode == 1 and untouched and len(r.stderr.strip().splitlines()) == 1
           and target in r.stderr else f"status {r.returncode}, untouched {untouched}, {r.stderr.strip()!r}")
    r = run(["archive", *args, "-o", target, "--force"])
    ok = r.returncode == 0 and info(target) is not None
    report("archive --force replaces it", None if ok else f"status {r.returncode}: {r.stderr.strip()!r}")
    leftovers = [n for n in os.listdir(tmp) if ".tmp-" in n]
    report("archive leaves no temporary files", None if not leftovers else str(leftovers))


with tempfile.TemporaryDirectory() as tmp:
    # --- the sample trace, its ELF copied away and deleted ---
    work = os.path.join(tmp, "sample")
    os.mkdir(work)
    shutil.copy(os.path.join(SAMPLE_DIR, "sample.pt"), work)
    shutil.copy(os.path.join(SAMPLE_DIR, "sample"), os.path.join(work, "prog"))
    original = decodes(["sample.pt", "--elf", "prog"], cwd=work)
    original_dump = run(["dump", "sample.pt", "--format", "jsonl"], cwd=work).stdout
    FILTER = ["--addr-filter", "0:1:0x401000-0x401010"]
    original_filtered = decodes(["sample.pt", "--elf", "prog", *FILTER], cwd=work)
    filtered_path = os.path.join(tmp, "sample-filtered.ptar")
    r = run(["archive", "sample.pt", "--elf", "prog", *FILTER, "-o", filtered_path], cwd=work)
    report("archive the sample trace with an address filter",
           None if r.returncode == 0 else r.stderr.strip())
    archive_path = os.path.join(tmp, "sample.ptar")
    r = run(["archive", "sample.pt", "--elf", "prog", "-o", archive_path], cwd=work)
    report("archive the sample trace", None if r.returncode == 0 else r.stderr.strip())
    shutil.rmtree(work)
    compare("sample", original, decodes([archive_path]), archive_path)
    compare("sample, address filter", original_filtered, decodes([filtered_path]), filtered_path)
    r = run(["dump", archive_path, "--format", "jsonl"])
    report("sample: dump of the archive lists the same packets",
           None if r.returncode == 0 and original_dump and r.stdout == original_dump
           else f"status {r.returncode}: {r.stderr.strip()!r}")
    meta = info(archive_path)
    image = meta["manifest"]["images"][0] if meta else {}
    report("the manifest names the image by build-id",
           None if image.get("build_id") == "46643ff0cf62ee72a7fca059aae56acf3bd7867d" else str(image))
    r = run(["decode", archive_path, "--elf", os.path.join(SAMPLE_DIR, "sample")])
    report("decode: images with an archive are refused",
           None if r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1 else
           f"status {r.returncode}: {r.stderr.strip()!r}")
    damage_cases(tmp, archive_path)
    overwrite_cases(tmp, [os.path.join(SAMPLE_DIR, "sample.pt"), "--elf", os.path.join(SAMPLE_DIR, "sample")])

    # --- the real Skylake trace (DynamoRIO), --elf and --raw, with timing parameters ---
    trace_dir = os.path.join(SHARED, "dynamorio", "clients", "drcachesim", "drpt2trace", "test_simple.raw")
    if not SHARED or not os.path.exists(os.path.join(trace_dir, "pt.bin")):
        skip("Skylake trace round trip", f"{trace_dir} is absent")
    else:
        params = ["--cpu", "6/85/4", "--mtc-freq", "3", "--nom-freq", "37",
                  "--cpuid-0x15.eax", "2", "--cpuid-0x15.ebx", "308"]
        for label, image in (("elf", ["--elf", "hello"]), ("raw", ["--raw", "hello:0x1000-0x1027:0x401000"])):
            work = os.path.join(tmp, "skl-" + label)
            os.mkdir(work)
            shutil.copy(os.path.join(trace_dir, "pt.bin"), work)
            shutil.copy(os.path.join(trace_dir, "hello"), work)
            original = decodes(["pt.bin", *image, *params], cwd=work)
            archive_path = os.path.join(tmp, f"skl-{label}.ptar")
            r = run(["archive", "pt.bin", *image, *params, "-o", archive_path], cwd=work)
            report(f"archive the Skylake trace ({label})", None if r.returncode == 0 else r.stderr.strip())
            shutil.rmtree(work)
            compare(f"Skylake {label}", original, decodes([archive_path]), archive_path)

TALLY.finish()
