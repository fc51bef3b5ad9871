#!/usr/bin/env python3
"""Hardware LBR import: `ptprof decode --branches` on real perf.data files with branch stacks.

1. autofdo/testdata/test.lbr (Xeon X5660, `perf record -b`): 9,232 samples of 16 records, every
   record (from, to, mispredicted/predicted) equal to perf 6.1's `perf script -F ip,brstack` listing.
2. The same records aggregated as AutoFDO's sample reader does (ranges [to_k, from_k+1] between
   consecutive records, as offsets in test.binary; its unit test's stride limit 0x50 for duplicate
   back edges): 134,622 ranges counted in all (AutoFDO's GetTotalSampleCount is this sum, not a
   sample count), 357 distinct, and [0x4e80,0x4e8e] counted 1,134 times.
3. perf_data_converter's perf.data.branch-4.14: records equal `perf script -F brstack` (when perf
   is installed).
4. Bad input: a perf.data without branch stacks and a truncated test.lbr fail with one line naming
   the file.
"""
import json
import lzma
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from tally import Tally  # noqa: E402

PTPROF = os.environ["PTPROF"]
DATA = os.environ["SHARED_TESTDATA"]
LBR = os.path.join(DATA, "autofdo", "testdata", "test.lbr")
LISTING = os.path.join(DATA, "autofdo", "reference-linux-perf-6.1", "test.lbr.script-ip-brstack.txt.xz")
BRANCH_414 = os.path.join(DATA, "perf_data_converter", "src", "quipper", "testdata", "perf.data.branch-4.14")
t = Tally()

if not os.path.exists(LBR) or not os.path.exists(LISTING):
    print(f"SKIP: {LBR} or its listing is absent")
    sys.exit(77)


def branches(path, *extra):
    out = subprocess.run([PTPROF, "decode", "--branches", *extra, path], capture_output=True, text=True)
    return out


def samples_of(jsonl):
    samples = {}
    for line in jsonl.splitlines():
        r = json.loads(line)
        samples.setdefault(r["sample"], []).append(r)
    return [samples[k] for k in sorted(samples)]


# 1. Every record against perf script.
out = branches(LBR, "--format", "jsonl")
t.check("test.lbr decodes", out.returncode == 0, out.stderr.strip())
samples = samples_of(out.stdout)
t.check("test.lbr: 9,232 samples", len(samples) == 9232, f"{len(samples)}")
t.check("test.lbr: 147,712 records (16 per sample)", sum(map(len, samples)) == 9232 * 16,
        f"{sum(map(len, samples))}")
listing = lzma.open(LISTING, "rt").read().splitlines()
mismatch = None
for index, (line, sample) in enumerate(zip(listing, samples)):
    entries = line.split()[1:]  # newest first: from/to/M|P|-/in_tx/abort/cycles
    want = []
    for e in reversed(entries):
        f = e.split("/")
        rec = {"from": hex(int(f[0], 16)), "to": hex(int(f[1], 16)), "sample": index}
        if f[2] in ("M", "P"):
            rec["mispred"] = f[2] == "M"
        want.append(rec)
    got = [{k: r[k] for k in ("from", "to", "sample", "mispred") if k in r} for r in sample]
    if got != want:
        mismatch = f"sample {index}: got {got[:2]}..., perf script {want[:2]}..."
        break
t.check("test.lbr: every record equals perf script -F ip,brstack", mismatch is None and len(listing) == len(samples),
        mismatch or f"{len(listing)} listing lines")

# 2. AutoFDO's aggregation over the CLI's records. test.binary is not PIE: its text is mapped at
# 0x400000 from file offset 0, so binary offset = address - 0x400000.
BASE, END = 0x400000, 0x400000 + os.path.getsize(os.path.join(DATA, "autofdo", "testdata", "test.binary"))
inside = lambda a: BASE <= a < END  # noqa: E731
ranges = {}
for sample in samples:
    newest = [(int(r["from"], 16), int(r["to"], 16)) for r in reversed(sample)]
    for i in range(1, len(newest)):
        if not inside(newest[i][1]):
            continue
        if i == 1 and newest[0] == newest[1] and (newest[0][0] - newest[0][1]) % (1 << 64) > 0x50:
            continue
        begin, end = newest[i][1] - BASE, newest[i - 1][0] - BASE
        if end < begin or end - begin > (1 << 20):
            continue
        ranges[(begin, end)] = ranges.get((begin, end), 0) + 1
t.check("AutoFDO ranges: 134,622 counted in all", sum(ranges.values()) == 134622, f"{sum(ranges.values())}")
t.check("AutoFDO ranges: 357 distinct", len(ranges) == 357, f"{len(ranges)}")
t.check("AutoFDO ranges: [0x4e80,0x4e8e] x1,134", ranges.get((0x4e80, 0x4e8e)) == 1134,
        f"{ranges.get((0x4e80, 0x4e8e))}")

# Text output: the binaries (recorded at /export/hda3/tmp/...) are not on this machine.
text = branches(LBR)
first = text.stdout.splitlines()[:17]
t.check("text: a sample header and 16 records", len(first) == 17 and first[0].startswith("sample 0: pid"),
        repr(first[:2]))
t.check("text: missing binaries are one warning line", text.stderr.count("\n") == 1, text.stderr[:300])

# 3. perf.data.branch-4.14 against perf script, when perf is there.
if not os.path.exists(BRANCH_414):
    t.skip("perf.data.branch-4.14", "absent")
else:
    out = branches(BRANCH_414, "--format", "jsonl")
    t.check("branch-4.14 decodes", out.returncode == 0, out.stderr.strip())
    got = samples_of(out.stdout)
    t.check("branch-4.14: 13 samples", len(got) == 13, f"{len(got)}")
    perf = shutil.which("perf")
    if not perf:
        t.skip("branch-4.14 against perf script", "perf is not installed")
    else:
        ps = subprocess.run([perf, "script", "-F", "brstack", "-i", BRANCH_414], capture_output=True, text=True)
        want = []
        for line in ps.stdout.splitlines():
            entries = line.split()
            if entries:
                want.append([(int(e.split("/")[0], 16), int(e.split("/")[1], 16)) for e in reversed(entries)])
        have = [[(int(r["from"], 16), int(r["to"], 16)) for r in s] for s in got]
        t.check("branch-4.14: records equal perf script -F brstack", have == want,
                f"{len(have)} vs {len(want)} samples")

# 4. Bad input.
ro = os.path.join(DATA, "autofdo", "testdata", "ro_sample.perf")
if os.path.exists(ro):
    out = branches(ro)
    t.check("perf.data without branch stacks: exit 1, one line naming the file",
            out.returncode == 1 and out.stderr.count("\n") == 1 and ro in out.stderr
            and "no branch stacks" in out.stderr, out.stderr.strip())
with tempfile.NamedTemporaryFile(suffix=".data") as cut:
    cut.write(open(LBR, "rb").read()[:200000])
    cut.flush()
    out = branches(cut.name)
    t.check("truncated perf.data: exit 1, one line naming the file and an offset",
            out.returncode == 1 and out.stderr.count("\n") == 1 and cut.name in out.stderr
            and "offset" in out.stderr, f"exit {out.returncode}: {out.stderr.strip()}")
t.finish()
