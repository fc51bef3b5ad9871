#!/usr/bin/env python3
"""`ptprof info` on real perf.data files agrees with perf.

1. Record counts by type equal the "Aggregated stats" of `perf report -D`: the stored perf 6.1
   reference for perf.data.intel_pt-4.14 and, when `perf` is installed, a live run on every real
   perf.data in the shared test data. Events perf synthesizes itself (printed at "0@(null)", e.g.
   the ATTR events of its cs_etm decoder) are not in the file and are left out of the comparison.
2. The per-CPU AUX streams `ptprof info --extract-aux` writes are byte-identical to
   perf_data_converter/aux-extracted/*.bin.
3. The intel_pt configuration is decoded: attr.config 0x300e601 and the ptdump options that the
   stored ptdump references were made with.
4. Pipe mode (when `perf` is installed: `perf inject -o -` turns the file into a pipe): same
   counts, same AUX bytes.
5. Fresh recordings made here with software events (when `perf record` works): a plain file with
   context switches, a compressed one (`-z`), and a pipe; counts again equal perf report -D's.
6. Broken files (cut in a record, an absurd record size, an AUXTRACE buffer past the end, a pipe
   without its header) are rejected with one line naming the file and the offset, never a crash.

Prints one line per case and "N passed, N failed, N skipped"; exit 77 without the test data.
"""
import json
import lzma
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

PTPROF = os.environ["PTPROF"]
DATA = os.environ.get("SHARED_TESTDATA", "")

PT_FILE = "perf_data_converter/src/quipper/testdata/perf.data.intel_pt-4.14"
REAL_FILES = [
    PT_FILE,
    "perf_data_converter/src/quipper/testdata/perf.data.branch-4.14",
    "simpleperf/testdata/etm/perf_etm.data",
    "simpleperf/testdata/etm/perf_with_missing_aux_data.data",
    "simpleperf/testdata/etm/perf_with_unformatted_trace.data",
    "autofdo/testdata/test.lbr",
    "autofdo/testdata/ro_sample.perf",
]
# perf's short names for the records the perf tool writes (perf_event__name).
PERF_NAMES = {"HEADER_ATTR": "ATTR", "HEADER_EVENT_TYPE": "EVENT_TYPE", "HEADER_TRACING_DATA": "TRACING_DATA",
              "HEADER_BUILD_ID": "BUILD_ID", "HEADER_FEATURE": "FEATURE"}
TYPE_NAMES = {64: "ATTR", 65: "EVENT_TYPE", 66: "TRACING_DATA", 67: "BUILD_ID", 80: "FEATURE"}

passed = failed = skipped = 0


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"ok    {name}")
    else:
        failed += 1
        print(f"FAIL  {name}: {detail}")


def skip(name, why):
    global skipped
    skipped += 1
    print(f"SKIP  {name}: {why}")


def perf_counts(report_text):
    """Record counts by perf's short name from `perf report -D`, without perf's synthesized events."""
    counts = {}
    in_stats = False
    for line in report_text.splitlines():
        if line.startswith("Aggregated stats"):
            in_stats = True
            continue
        if in_stats:
            m = re.match(r"\s*(\S+) events:\s+(\d+)", line)
            if not m:
                break
            if m.group(1) != "TOTAL":
                counts[m.group(1)] = int(m.group(2))
    for m in re.finditer(r"^0@\(null\) \[0x[0-9a-f]+\]: event: (\d+)$", report_text, re.M):
        name = TYPE_NAMES.get(int(m.group(1)), m.group(1))
        counts[name] = counts.get(name, 0) - 1
    return {k: v for k, v in counts.items() if v != 0}


def ptprof_json(path, *extra):
    out = subprocess.run([PTPROF, "info", "--format", "json", *extra, path], capture_output=True, text=True,
                         timeout=120)
    if out.returncode != 0:
        return None, out.stderr.strip()
    return json.loads(out.stdout), ""


def ptprof_counts(info):
    counts = {}
    for name, count in info["records_by_type"].items():
        short = name[len("PERF_RECORD_"):]
        counts[PERF_NAMES.get(short, short)] = count
    return counts


def compare_counts(name, info, reference):
    ours = ptprof_counts(info)
    check(name, ours == reference, f"ptprof {sorted(ours.items())} vs perf {sorted(reference.items())}")


def check_aux(name, out_dir):
    ref_dir = os.path.join(DATA, "perf_data_converter", "aux-extracted")
    refs = sorted(f for f in os.listdir(ref_dir) if f.endswith(".bin"))
    check(f"{name}: two reference streams", len(refs) == 2, f"found {refs}")
    for ref in refs:
        cpu = re.search(r"\.(cpu\d+)\.bin$", ref).group(1)
        ours = os.path.join(out_dir, cpu + ".bin")
        same = os.path.exists(ours) and open(ours, "rb").read() == open(os.path.join(ref_dir, ref), "rb").read()
        check(f"{name}: {cpu}.bin is byte-identical to {ref}", same)


def stored_reference():
    path = os.path.join(DATA, PT_FILE)
    ref = os.path.join(DATA, "perf_data_converter", "reference-linux-perf-6.1",
                       "perf.data.intel_pt-4.14.report-D.txt.xz")
    with lzma.open(ref, "rt") as f:
        reference = perf_counts(f.read())
    with tempfile.TemporaryDirectory() as tmp:
        info, err = ptprof_json(path, "--extract-aux", tmp)
        if info is None:
            check("intel_pt-4.14: ptprof info", False, err)
            return
        compare_counts("intel_pt-4.14: record counts = stored perf report -D", info, reference)
        check("intel_pt-4.14: 257 records", info["records"] == 257, info["records"])
        check_aux("intel_pt-4.14", tmp)
    streams = {s["name"]: s["bytes"] for s in info["streams"]}
    check("intel_pt-4.14: streams cpu0 and cpu3", streams == {"cpu0": 12240, "cpu3": 137728}, streams)
    pt = next((e for e in info["events"] if e["pmu"] == "intel_pt"), None)
    check("intel_pt-4.14: attr.config 0x300e601", pt is not None and pt["config"] == 0x300e601)
    if pt:
        cfg = pt["pt_config"]
        check("intel_pt-4.14: config bits pt tsc mtc branch, mtc_period 3, psb_period 3, no noretcomp/cyc",
              cfg == {"pt": 1, "mtc": 1, "tsc": 1, "branch": 1, "mtc_period": 3, "cyc_thresh": 0, "psb_period": 3},
              cfg)
    opts = info.get("intel_pt", {}).get("decode_options")
    want = "--cpu 6/78/3 --mtc-freq 3 --nom-freq 12 --cpuid-0x15.eax 2 --cpuid-0x15.ebx 100"
    check("intel_pt-4.14: ptdump options as the stored ptdump references used", opts == want, opts)
    check("intel_pt-4.14: cpus", info["cpus"] == [0, 1, 2, 3], info["cpus"])
    check("intel_pt-4.14: time span and TSC",
          info.get("first_time_ns") == 641255848111 and info.get("last_time_ns") == 641258090053
          and "first_tsc" in info, {k: info.get(k) for k in ("first_time_ns", "last_time_ns", "first_tsc")})
    text = subprocess.run([PTPROF, "info", path], capture_output=True, text=True).stdout
    check("intel_pt-4.14: text names the streams", "cpu0       12240 bytes" in text and "cpu3       137728" in text)


def live_perf(perf):
    for rel in REAL_FILES:
        path = os.path.join(DATA, rel)
        name = os.path.basename(rel)
        if not os.path.exists(path):
            skip(name, "absent")
            continue
        out = subprocess.run([perf, "report", "-D", "-i", path], capture_output=True, text=True, errors="replace",
                             timeout=600)
        reference = perf_counts(out.stdout)
        info, err = ptprof_json(path)
        if info is None:
            check(f"{name}: ptprof info", False, err)
            continue
        if not reference:
            skip(f"{name}: live perf report -D", "perf printed no aggregated stats")
            continue
        compare_counts(f"{name}: record counts = live perf report -D", info, reference)
        check(f"{name}: no undecodable records", info["undecodable_records"] == 0 and not info["problems"],
              info["problems"])


def pipe_mode(perf):
    path = os.path.join(DATA, PT_FILE)
    with tempfile.TemporaryDirectory() as tmp:
        pipe = os.path.join(tmp, "pipe.data")
        with open(pipe, "wb") as f:
            out = subprocess.run([perf, "inject", "-i", path, "-o", "-"], stdout=f, stderr=subprocess.DEVNULL)
        if out.returncode != 0:
            skip("pipe mode", "perf inject failed")
            return
        file_info, _ = ptprof_json(path)
        info, err = ptprof_json(pipe, "--extract-aux", os.path.join(tmp, "aux"))
        if info is None:
            check("pipe mode: ptprof info", False, err)
            return
        check("pipe mode: recognised", info["kind"] == "perf_data_pipe", info["kind"])
        ours = {k: v for k, v in ptprof_counts(info).items() if k not in ("ATTR", "FEATURE", "BUILD_ID")}
        check("pipe mode: same record counts as the file", ours == ptprof_counts(file_info),
              f"{sorted(ours.items())}")
        check("pipe mode: attrs from HEADER_ATTR records", len(info["events"]) == len(file_info["events"]))
        check_aux("pipe mode", os.path.join(tmp, "aux"))


def fresh_recordings(perf):
    workload = [sys.executable, "-c", "import json; [json.dumps(list(range(50))) for _ in range(3000)]"]
    variants = [("plain", ["--switch-events"], False), ("compressed", ["-z"], False), ("pipe", [], True)]
    with tempfile.TemporaryDirectory() as tmp:
        for name, options, pipe in variants:
            path = os.path.join(tmp, name + ".data")
            cmd = [perf, "record", "-q", "-e", "task-clock", "-c", "50000", *options, "-o", "-" if pipe else path,
                   "--", *workload]
            with open(path, "wb") if pipe else open(os.devnull, "wb") as out:
                rec = subprocess.run(cmd, stdout=out, stderr=subprocess.DEVNULL, timeout=120)
            if rec.returncode != 0 or not os.path.getsize(path):
                skip(f"fresh {name} recording", "perf record failed here")
                continue
            if pipe:
                with open(path, "rb") as f:
                    report = subprocess.run([perf, "report", "-D", "-i", "-"], stdin=f, capture_output=True, text=True,
                                            errors="replace", timeout=300)
            else:
                report = subprocess.run([perf, "report", "-D", "-i", path], capture_output=True, text=True,
                                        errors="replace", timeout=300)
            reference = perf_counts(report.stdout)
            info, err = ptprof_json(path)
            if info is None:
                check(f"fresh {name} recording: ptprof info", False, err)
                continue
            compare_counts(f"fresh {name} recording: record counts = live perf report -D", info, reference)
            check(f"fresh {name} recording: no undecodable records",
                  info["undecodable_records"] == 0 and not info["problems"], info["problems"])


def rejected(name, data_bytes, tmp):
    path = os.path.join(tmp, name.replace(" ", "_") + ".data")
    with open(path, "wb") as f:
        f.write(data_bytes)
    out = subprocess.run([PTPROF, "info", path], capture_output=True, text=True, timeout=60)
    lines = out.stderr.strip().splitlines()
    ok = out.returncode == 1 and len(lines) == 1 and path in lines[0] and "offset 0x" in lines[0]
    check(f"bad input: {name}", ok, f"status {out.returncode}, stderr {out.stderr.strip()!r}")


def bad_input():
    original = open(os.path.join(DATA, PT_FILE), "rb").read()
    data_offset, data_size = struct.unpack_from("<QQ", original, 40)
    with tempfile.TemporaryDirectory() as tmp:
        first = data_offset
        rejected("cut in the middle of a record", original[:first + 20], tmp)
        bad = bytearray(original)
        struct.pack_into("<H", bad, first + 6, 0xfff8)
        rejected("absurd record size", bytes(bad), tmp)
        bad = bytearray(original)
        struct.pack_into("<H", bad, first + 6, 0)
        rejected("record size 0", bytes(bad), tmp)
        # The first AUXTRACE record: type 71 with a payload; make its size reach past the end.
        pos = first
        while pos < first + data_size:
            rtype, _, rsize = struct.unpack_from("<IHH", original, pos)
            if rtype == 71:
                bad = bytearray(original)
                struct.pack_into("<Q", bad, pos + 8, 1 << 40)
                rejected("AUXTRACE buffer past the end", bytes(bad), tmp)
                break
            pos += rsize + (struct.unpack_from("<Q", original, pos + 8)[0] if rtype == 71 else 0)
        rejected("pipe without its header", original[first:first + 4096], tmp)
        rejected("cut inside the file header", original[:60], tmp)


def main():
    if not DATA or not os.path.isdir(os.path.join(DATA, "perf_data_converter")):
        print(f"SKIP: shared test data not found at '{DATA}'")
        return 77
    stored_reference()
    perf = shutil.which("perf")
    if perf:
        live_perf(perf)
        pipe_mode(perf)
        fresh_recordings(perf)
    else:
        skip("live perf report -D and pipe mode", "perf is not installed")
    bad_input()
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
