#!/usr/bin/env python3
"""ptprof dump/decode on an intel_pt perf.data, with the PT parameters taken from the file alone.

  dump     `dump --stream cpuN --format jsonl perf.data.intel_pt-4.14` lists, packet for packet
           (offset, name, payload), what libipt 2.0.5's ptdump lists for that AUX stream given the
           parameters by hand (reference-libipt-2.0.5-ptdump/*.xz); every record names its
           stream; two --stream options list both streams, one after the other.
  decode   `decode perf.data` runs to the end (exit 0) although the data set holds no binaries:
           each missing binary is reported once with its build-id, and the code becomes gaps.
  errors   an unknown --stream name and hand-given PT options are bad input (exit 1).

Prints one FAIL line per failed case and `N passed, N failed, N skipped`; exits 77 when the
shared test data is absent.
"""
import json
import lzma
import os
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ptdump_conformance import compare, jsonl_as_ptdump  # noqa: E402

PERF_DATA = "perf_data_converter/src/quipper/testdata/perf.data.intel_pt-4.14"
REFERENCES = "perf_data_converter/reference-libipt-2.0.5-ptdump"
REFERENCE_NAME = re.compile(r"\.idx\d+\.(cpu\d+)\.ptdump\.txt\.xz$")


class Tally:
    def __init__(self):
        self.passed = self.failed = self.skipped = 0

    def check(self, name, problem):
        if problem is None:
            self.passed += 1
        else:
            self.failed += 1
            print("FAIL %s: %s" % (name, problem))


def run(ptprof, args):
    result = subprocess.run([ptprof] + args, capture_output=True, timeout=300)
    return (result.returncode, result.stdout.decode("utf-8", errors="replace"),
            result.stderr.decode("utf-8", errors="replace"))


def split_by_stream(output):
    """JSONL records grouped by their "stream" field, in order, as JSONL text."""
    streams, order = {}, []
    for line in output.splitlines():
        stream = json.loads(line).get("stream")
        if stream not in streams:
            order.append(stream)
        streams.setdefault(stream, []).append(line)
    return order, {name: "\n".join(lines) for name, lines in streams.items()}


def check_dump(tally, ptprof, perf_data, references):
    expected = {}
    for reference in sorted(references.glob("*.ptdump.txt.xz")):
        match = REFERENCE_NAME.search(reference.name)
        if match:
            expected[match.group(1)] = lzma.decompress(reference.read_bytes()).decode("utf-8")
    tally.check("dump: reference listings", None if expected else "none in %s" % references)
    for stream, listing in expected.items():
        status, out, err = run(ptprof, ["dump", "--stream", stream, "--format", "jsonl",
                                        str(perf_data)])
        if status != 0:
            tally.check("dump %s" % stream, "exit status %d: %s" % (status, err.strip()))
            continue
        order, _ = split_by_stream(out)
        tally.check("dump %s: stream field" % stream,
                    None if order == [stream] else "records name streams %s" % order)
        tally.check("dump %s: packets" % stream, compare(jsonl_as_ptdump(out), listing))
    # Both streams in one run: each listed whole, one after the other, in file order.
    names = sorted(expected)
    args = ["dump", "--format", "jsonl"]
    for name in names:
        args += ["--stream", name]
    status, out, err = run(ptprof, args + [str(perf_data)])
    if status != 0:
        tally.check("dump %s" % "+".join(names), "exit status %d: %s" % (status, err.strip()))
        return
    order, parts = split_by_stream(out)
    tally.check("dump %s: order" % "+".join(names),
                None if order == names else "streams came as %s" % order)
    for name in names:
        tally.check("dump %s: packets of %s" % ("+".join(names), name),
                    compare(jsonl_as_ptdump(parts.get(name, "")), expected[name]))
    status, out, err = run(ptprof, ["dump", "--stream", names[0], str(perf_data)])
    tally.check("dump %s text" % names[0],
                None if status == 0 and out.startswith("# stream %s " % names[0])
                else "exit status %d, first line %r" % (status, out[:60]))


def check_decode(tally, ptprof, perf_data):
    status, out, err = run(ptprof, ["decode", str(perf_data)])
    tally.check("decode: exit status", None if status == 0 else
                "exit status %d: %s" % (status, err.strip()[-300:]))
    missing = re.findall(r"binary (\S+) \(build-id ([0-9a-f]+|unknown)\): not found", err)
    tally.check("decode: missing binaries reported",
                None if ("/usr/bin/coreutils", "c0a88cf4408ddef75343a69e41602f4d3de34e68")
                in missing else "no line for /usr/bin/coreutils in: %s" % err[:300])
    paths = [path for path, _ in missing]
    tally.check("decode: each missing binary once",
                None if len(paths) == len(set(paths)) else "repeated: %s" %
                sorted({p for p in paths if paths.count(p) > 1}))
    tally.check("decode: gaps", None if "[gap: no_image" in out else "no gap in the output")

    status, out, err = run(ptprof, ["decode", "--format", "jsonl", "--stream", "cpu3",
                                    str(perf_data)])
    problem = None if status == 0 else "exit status %d: %s" % (status, err.strip()[-300:])
    if problem is None:
        events = [json.loads(line) for line in out.splitlines()]
        gaps = [e for e in events if e.get("event") == "gap"]
        if not gaps:
            problem = "no gap events"
        elif any(e.get("cpu") != 3 for e in events):
            problem = "an event without cpu 3"
    tally.check("decode --stream cpu3 --format jsonl", problem)


def check_errors(tally, ptprof, perf_data):
    status, _, err = run(ptprof, ["dump", "--stream", "cpu9", str(perf_data)])
    tally.check("dump --stream cpu9",
                None if status == 1 and "no such trace stream (there are: cpu0, cpu3)" in err
                else "exit status %d: %s" % (status, err.strip()))
    status, _, err = run(ptprof, ["decode", "--cpu", "6/78", str(perf_data)])
    tally.check("decode --cpu on perf.data",
                None if status == 1 and "carries its PT parameters" in err
                else "exit status %d: %s" % (status, err.strip()))


def main():
    ptprof = os.environ.get("PTPROF")
    if not ptprof:
        print("PTPROF is not set")
        return 2
    root = Path(os.environ.get("SHARED_TESTDATA", ""))
    perf_data = root / PERF_DATA
    if not os.environ.get("SHARED_TESTDATA") or not perf_data.exists():
        print("SKIP: %s not found" % perf_data)
        print("0 passed, 0 failed, 1 skipped")
        return 77
    tally = Tally()
    check_dump(tally, ptprof, perf_data, root / REFERENCES)
    check_decode(tally, ptprof, perf_data)
    check_errors(tally, ptprof, perf_data)
    print("%d passed, %d failed, %d skipped" % (tally.passed, tally.failed, tally.skipped))
    return 0 if tally.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
