#!/usr/bin/env python3
"""cs_etm perf.data in dump and delta: simpleperf's perf_etm.data (ETMv4, one AUX stream).

dump: the packets ptprof lists for the stream (cpu7) must equal, one for one and in order, the
ETMv4 packets `perf report -D` prints for its AUXTRACE buffer (perf 6.1 + OpenCSD 1.3.3, stored in
simpleperf/reference): same Idx, trace ID and packet text; `--stream cpu7` gives the same listing,
an unknown stream is an error naming the streams there are, JSON Lines records name the stream.
When a perf with CoreSight support is installed, its live `perf report -D` is compared too.

delta: with `--pattern open=cmp --pattern close=tbnz` (the loop of etm_test_loop), the interval
count must equal the count made here from `decode --insn` (an interval opens at a cmp and closes
at the next tbnz; a gap drops an open interval), and on two threads with small pieces the report
must be the same. SKIPs (77) when the data is absent.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tally import Tally  # noqa: E402

PTPROF = os.environ.get("PTPROF", "build/ptprof")
DATA = os.path.join(os.environ.get("SHARED_TESTDATA", "../shared/testdata"), "simpleperf")
ETM = os.path.join(DATA, "testdata", "etm")
PERF_ETM = os.path.join(ETM, "perf_etm.data")
REFERENCE = os.path.join(DATA, "reference", "perf_etm.data.report-D.txt")
PACKET = re.compile(r"Idx:(\d+); ID:([0-9a-fA-F]+);(?: \[[^\]]*\];)?\s*(.*)$")


def run(*args):
    return subprocess.run([PTPROF, *args], capture_output=True, text=True, timeout=60)


def packets(text):
    """(idx, id, packet text without trailing blanks) of each Idx line."""
    out = []
    for line in text.splitlines():
        m = PACKET.search(line)
        if m:
            out.append((int(m.group(1)), int(m.group(2), 16), m.group(3).strip()))
    return out


def first_difference(a, b):
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return f"packet {i}: ptprof {x} vs perf {y}"
    return f"lengths {len(a)} vs {len(b)}"


def check_dump(t):
    with open(REFERENCE) as f:
        oracle = packets(f.read())
    r = run("dump", PERF_ETM)
    t.check("dump exits 0", r.returncode == 0, r.stderr.strip())
    ours = packets(r.stdout)
    t.check(f"dump: {len(oracle)} packets equal perf report -D (idx, id, text)", ours == oracle and len(oracle) > 0,
            first_difference(ours, oracle))
    kinds = [p[2].split(" ")[0] for p in ours]
    t.check("dump: packet kinds in perf's order", kinds == [p[2].split(" ")[0] for p in oracle])
    t.check("dump: a '# stream cpu7' line", "# stream cpu7 (384 bytes)" in r.stdout, r.stdout[:200])
    r2 = run("dump", "--stream", "cpu7", PERF_ETM)
    t.check("dump --stream cpu7: same listing", r2.returncode == 0 and r2.stdout == r.stdout)
    r3 = run("dump", "--stream", "cpu3", PERF_ETM)
    t.check("dump --stream cpu3: error naming cpu7", r3.returncode != 0 and "cpu7" in r3.stderr
            and r3.stderr.count("\n") == 1, r3.stderr)
    r4 = run("dump", "--format", "jsonl", PERF_ETM)
    recs = [json.loads(l) for l in r4.stdout.splitlines()] if r4.returncode == 0 else []
    t.check("dump --format jsonl: a record per packet naming cpu7",
            len(recs) == len(oracle) and all(x["stream"] == "cpu7" for x in recs)
            and packets("\n".join(x["packet"] for x in recs)) == oracle, r4.stderr)

    live = subprocess.run(["perf", "report", "-D", "-i", PERF_ETM], capture_output=True, text=True,
                          timeout=60) if shutil_which("perf") else None
    live_packets = packets(live.stdout) if live and live.returncode == 0 else []
    if live_packets:
        t.check(f"dump: live perf report -D ({len(live_packets)} packets) agrees", live_packets == ours,
                first_difference(ours, live_packets))
    else:
        t.skip("dump: live perf report -D", "no perf with CoreSight decoding here")


def shutil_which(name):
    import shutil
    return shutil.which(name)


def independent_intervals(insn_text):
    """Algorithm 1 over decode --insn: cmp opens (again), tbnz closes an open interval, a gap drops it."""
    opened, count, cmps, tbnzs = False, 0, 0, 0
    for line in insn_text.splitlines():
        if line.startswith("[gap"):
            opened = False
            continue
        fields = line.split()
        if len(fields) < 2 or line.startswith("["):
            continue
        mnemonic = fields[1]
        if mnemonic == "cmp":
            cmps += 1
            opened = True
        elif mnemonic == "tbnz":
            tbnzs += 1
            if opened:
                count += 1
                opened = False
    return count, cmps, tbnzs


def check_delta(t):
    with tempfile.TemporaryDirectory() as symfs:
        target = os.path.join(symfs, "data", "local", "tmp")
        os.makedirs(target)
        os.symlink(os.path.abspath(os.path.join(ETM, "etm_test_loop")), os.path.join(target, "etm_test_loop"))
        d = run("decode", "--insn", "--symfs", symfs, PERF_ETM)
        t.check("decode --insn exits 0", d.returncode == 0, d.stderr.strip())
        expected, cmps, tbnzs = independent_intervals(d.stdout)
        t.check(f"decode --insn: the loop ran ({cmps} cmp, {tbnzs} tbnz)", cmps >= 100 and tbnzs >= 100)
        args = ["delta", "--format", "json", "--symfs", symfs, "--pattern", "open=cmp", "--pattern",
                "close=tbnz", "--pair", "open,close", PERF_ETM]
        r = run(*args)
        t.check("delta exits 0", r.returncode == 0, r.stderr.strip())
        report = json.loads(r.stdout) if r.returncode == 0 else {}
        got = report.get("counts", {}).get("intervals")
        t.check(f"delta: {expected} intervals equal the count from decode --insn", got == expected,
                f"delta says {got}; {json.dumps(report.get('counts'))}")
        r2 = run(*args[:-1], "--stream", "cpu7", PERF_ETM)
        t.check("delta --stream cpu7: same report", r2.returncode == 0 and r2.stdout == r.stdout, r2.stderr)
        # On two threads the AUX run is cut into 64-byte pieces whose events go to parts of the
        # profiler (src/model/unended_sink.h): the same report.
        r4 = run(*args[:-1], "--jobs", "2", "--psb-segment", "64", PERF_ETM)
        t.check("delta --jobs 2 --psb-segment 64: same report", r4.returncode == 0 and r4.stdout == r.stdout,
                r4.stderr)
        r3 = run("delta", "--pattern", "open=cmp", "--pattern", "close=tbnz", "--pair", "open,close", PERF_ETM)
        t.check("delta without --symfs: no code, one-line exit 1", r3.returncode == 1, r3.stderr)


def main():
    t = Tally()
    if not (os.path.exists(PERF_ETM) and os.path.exists(REFERENCE)):
        print(f"SKIP: {PERF_ETM} or {REFERENCE} absent")
        sys.exit(77)
    check_dump(t)
    check_delta(t)
    t.finish()


if __name__ == "__main__":
    main()
