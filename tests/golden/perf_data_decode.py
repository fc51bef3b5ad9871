#!/usr/bin/env python3
"""ptprof dump/decode on an intel_pt perf.data, with the PT parameters taken from the file alone.

  dump     `dump --stream cpuN --format jsonl perf.data.intel_pt-4.14` lists, packet for packet
           (offset, name, payload), what libipt 2.0.5's ptdump lists for that AUX stream given the
           parameters by hand (reference-libipt-2.0.5-ptdump/*.xz); every record names its
           stream; two --stream options list both streams, one after the other.
  decode   `decode perf.data` runs to the end (exit 0) although the data set holds no binaries:
           each missing binary is reported once with its build-id, and the code becomes gaps.
  tasks    `decode --format jsonl perf.data` (both streams, merged by time): every timed event's
           pid/tid is the task perf's own `report -D` listing says runs on that CPU at that time
           (from each PERF_RECORD_SWITCH_CPU_WIDE IN on, the `next pid/tid` of the OUT record
           before it: between the two the CPU still runs the old task's switch path; from an
           ITRACE_START on, its task); there are
           ContextSwitch ("switch") events; the merge keys never go down.
  kernel   `decode --kallsyms FILE` names kernel addresses in text output: with a kallsyms that puts
           entry_SYSCALL_64 at 0xffffffffb960d300, the trace's first enable (at ...d302) reads
           `<entry_SYSCALL_64+0x2>` and its first disable `<entry_SYSCALL_64>`.
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
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ptdump_conformance import compare, jsonl_as_ptdump  # noqa: E402

PERF_DATA = "perf_data_converter/src/quipper/testdata/perf.data.intel_pt-4.14"
REFERENCES = "perf_data_converter/reference-libipt-2.0.5-ptdump"
REFERENCE_NAME = re.compile(r"\.idx\d+\.(cpu\d+)\.ptdump\.txt\.xz$")
REPORT_D = "perf_data_converter/reference-linux-perf-6.1/perf.data.intel_pt-4.14.report-D.txt.xz"
SWITCH = re.compile(r"^(\d+) (\d+) 0x[0-9a-f]+ \[0x[0-9a-f]+\]: PERF_RECORD_SWITCH_CPU_WIDE (IN|OUT) "
                    r"\s+(?:next|prev) pid/tid:\s+(\d+)/(\d+)")
ITRACE_START = re.compile(r"^(\d+) (\d+) 0x[0-9a-f]+ \[0x[0-9a-f]+\]: PERF_RECORD_ITRACE_START "
                          r"pid: (\d+) tid: (\d+)")


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


def schedule_from_report(report):
    """{cpu: [(time, pid, tid)]}: from each switch-in record on, the task the switch-out record
    before it named as next; from an ITRACE_START on, its task."""
    records = []
    for line in lzma.decompress(report.read_bytes()).decode("utf-8", errors="replace").splitlines():
        match = SWITCH.match(line)
        if match:
            cpu, time, kind, pid, tid = match.groups()
            records.append((int(time), int(cpu), kind, int(pid), int(tid)))
        match = ITRACE_START.match(line)
        if match:
            cpu, time, pid, tid = match.groups()
            records.append((int(time), int(cpu), "START", int(pid), int(tid)))
    schedule, next_of_cpu = {}, {}
    for time, cpu, kind, pid, tid in sorted(records):
        if kind == "OUT":
            next_of_cpu[cpu] = (pid, tid)
        elif kind == "START":  # tracing starts in this task: it runs
            schedule.setdefault(cpu, []).append((time, pid, tid))
        elif cpu in next_of_cpu:
            schedule.setdefault(cpu, []).append((time,) + next_of_cpu.pop(cpu))
    return schedule


def check_tasks(tally, ptprof, perf_data, report):
    schedule = schedule_from_report(report)
    tally.check("tasks: switch records in perf report -D", None if sum(map(len, schedule.values()))
                > 50 else "only %s" % {c: len(s) for c, s in schedule.items()})
    status, out, err = run(ptprof, ["decode", "--format", "jsonl", str(perf_data)])
    if status != 0:
        tally.check("tasks: decode", "exit status %d: %s" % (status, err.strip()[-300:]))
        return
    events = [json.loads(line) for line in out.splitlines()]
    switches = [e for e in events if e.get("event") == "switch"]
    tally.check("tasks: ContextSwitch events", None if switches else "none")
    checked, wrong = 0, []
    for e in events:
        slices = schedule.get(e.get("cpu"), [])
        if "time" not in e or not slices or e["time"] < slices[0][0]:
            continue
        _, pid, tid = [s for s in slices if s[0] <= e["time"]][-1]
        checked += 1
        if (e.get("pid"), e.get("tid")) != (pid, tid):
            wrong.append((e, pid, tid))
    tally.check("tasks: pid/tid of %d timed events agree with perf's switch records" % checked,
                None if checked and not wrong else
                "%d checked, %d wrong, first %s" % (checked, len(wrong), wrong[:1]))
    last, keys, broken = 0, {}, None
    for i, e in enumerate(events):
        own = e.get("time", e.get("tsc"))
        key = keys.get(e.get("cpu"), 0) if own is None else max(own, keys.get(e.get("cpu"), 0))
        keys[e.get("cpu")] = key
        if key < last and broken is None:
            broken = "event #%d (cpu %s) key %d after %d" % (i, e.get("cpu"), key, last)
        last = max(last, key)
    tally.check("tasks: cpu0 and cpu3 merged by time", broken)


def check_kallsyms(tally, ptprof, perf_data):
    with tempfile.TemporaryDirectory(prefix="ptprof-kallsyms-") as tmp:
        kallsyms = Path(tmp) / "kallsyms"
        kallsyms.write_text("ffffffffb9600000 T _stext\nffffffffb960d300 T entry_SYSCALL_64\n"
                            "ffffffffb960d400 t later_symbol\n")
        status, out, err = run(ptprof, ["decode", "--stream", "cpu3", "--kallsyms", str(kallsyms),
                                        str(perf_data)])
    problem = None if status == 0 else "exit status %d: %s" % (status, err.strip()[-300:])
    if problem is None:
        enabled = [l for l in out.splitlines() if "[enabled ip 0xffffffffb960d302" in l]
        disabled = [l for l in out.splitlines() if "[disabled ip 0xffffffffb960d300" in l]
        if not enabled or "<entry_SYSCALL_64+0x2>" not in enabled[0]:
            problem = "enable line: %s" % (enabled[:1] or "none")
        elif not disabled or "<entry_SYSCALL_64>" not in disabled[0]:
            problem = "disable line: %s" % (disabled[:1] or "none")
    tally.check("decode --kallsyms: kernel addresses named", problem)


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
    check_tasks(tally, ptprof, perf_data, root / REPORT_D)
    check_kallsyms(tally, ptprof, perf_data)
    check_errors(tally, ptprof, perf_data)
    print("%d passed, %d failed, %d skipped" % (tally.passed, tally.failed, tally.skipped))
    return 0 if tally.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
