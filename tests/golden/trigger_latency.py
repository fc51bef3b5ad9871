#!/usr/bin/env python3
"""Latency-triggered snapshots end to end (`ptprof record --backend qemu --snapshot-on
'syscall-latency>1ms:nanosleep'`; SKIP without qemu-x86_64).

The workload (tools/workloads/slow_syscall.c) makes many fast calls (getpid, nanosleep(0)) and a
few deliberately slow nanosleep(5 ms); each kind has its own labelled `syscall` instruction,
whose address it prints. The recording must hold exactly one latency snapshot per slow call, in
order; each decodes, holds the slow call's `syscall` and its return (the next instruction), and no
fast call after it; and it is no larger than --pre. The plugin measures the host time around
each syscall: on a very busy host a nanosleep(0) can really take more than 1 ms, and such a
snapshot (it ends at the fast nanosleep) is reported, not counted as a slow call.
Then --max-snapshots, --min-interval and the grammar's column errors.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

PTPROF = os.environ["PTPROF"]
BUILD = os.path.dirname(PTPROF)
WORKLOAD = os.path.join(BUILD, "src", "record", "workload_slow_syscall")
TRIGGER = "syscall-latency>1ms:nanosleep"
ROUNDS, FAST, SLOW_MS, PRE = 4, 2000, 5, 16384

passed = failed = 0


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"ok    {name}")
    else:
        failed += 1
        print(f"FAIL  {name}: {detail}")


def record(out, *options, rounds=ROUNDS):
    return subprocess.run([PTPROF, "record", "-o", out, "--force", *options, "--", WORKLOAD,
                           str(rounds), str(FAST), str(SLOW_MS)], capture_output=True, text=True)


def manifest(archive):
    r = subprocess.run([PTPROF, "info", "--format", "json", archive], capture_output=True, text=True)
    return json.loads(r.stdout)["manifest"] if r.returncode == 0 else None


def decode(archive, stream):
    r = subprocess.run([PTPROF, "decode", "--insn", "--format", "jsonl", "--stream", stream, archive],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return None, r.stderr.strip()
    return [int(json.loads(l)["ip"], 16) for l in r.stdout.splitlines() if '"size"' in l], ""


def latency_snapshots(meta):
    return [t for t in meta.get("triggers", []) if t.get("label") == TRIGGER]


if not shutil.which("qemu-x86_64"):
    print("SKIP: qemu-x86_64 is not installed (tools/setup.sh installs qemu-user)")
    sys.exit(77)

with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "slow.ptar")
    r = record(out, "--snapshot-on", TRIGGER, "--pre", str(PRE))
    check("record exits 0", r.returncode == 0, r.stderr.strip())
    m = re.search(r"fast_getpid (0x[0-9a-f]+) fast_nanosleep (0x[0-9a-f]+) slow_nanosleep (0x[0-9a-f]+)",
                  r.stdout)
    if r.returncode != 0 or not m:
        print(r.stdout, r.stderr)
        sys.exit(1)
    fast_getpid, fast_sleep, slow_sleep = (int(x, 16) for x in m.groups())
    meta = manifest(out)
    snaps = latency_snapshots(meta)
    slow_snaps, load_snaps = [], []
    for t in snaps:
        ips, err = decode(out, t["stream"])
        check(f"{t['stream']} decodes", ips is not None, err)
        if not ips:
            continue
        syscalls = [i for i, ip in enumerate(ips) if ip in (fast_getpid, fast_sleep, slow_sleep)]
        last = syscalls[-1] if syscalls else None
        kind = ips[last] if last is not None else None
        if kind == slow_sleep:
            slow_snaps.append((t, ips, last))
        else:
            load_snaps.append((t, kind))
    for t, kind in load_snaps:
        print(f"note  {t['stream']}: the host made a fast "
              f"{'nanosleep(0)' if kind == fast_sleep else hex(kind or 0)} take > 1 ms")
    check("every other latency snapshot ends at a fast nanosleep the busy host slowed",
          all(kind == fast_sleep for _, kind in load_snaps), str(load_snaps))
    check(f"exactly {ROUNDS} snapshots of the slow nanosleep calls",
          len(slow_snaps) == ROUNDS, f"{len(slow_snaps)} of {len(snaps)} latency snapshots")
    for t, ips, last in slow_snaps:
        name = t["stream"]
        check(f"{name}: the slow syscall is followed by its return (syscall+2)",
              last + 1 < len(ips) and ips[last + 1] == slow_sleep + 2,
              f"{len(ips) - last - 1} instructions after it")
        after = [ip for ip in ips[last + 1:] if ip in (fast_getpid, fast_sleep)]
        check(f"{name}: no fast call after the slow one", not after, f"{len(after)} fast calls")
        member = next((s for s in meta["streams"] if s["name"] == name), None)
        check(f"{name}: records the thread", member is not None and member.get("tid", 0) > 0)
        check(f"{name}: records when the trigger fired (host ns)", t.get("time_ns", 0) > 0, str(t))
    # A snapshot holds at most --pre bytes of the ring: not the whole round of fast calls.
    r = subprocess.run([PTPROF, "info", "--format", "json", out], capture_output=True, text=True)
    members = {mb.get("name"): mb for mb in json.loads(r.stdout).get("members", [])}
    for t, ips, last in slow_snaps:
        mb = members.get(f"streams/{t['stream']}.pt")
        size = mb.get("size", mb.get("bytes")) if mb else None
        check(f"{t['stream']}: no larger than --pre {PRE}", size is not None and size <= PRE,
              f"{size} bytes ({mb})")
        fast_before = sum(1 for ip in ips[:last] if ip == fast_sleep)
        check(f"{t['stream']}: holds fewer fast nanosleeps than the round ({FAST})",
              fast_before < FAST, f"{fast_before}")

    # --max-snapshots: the first two slow calls only.
    r = record(out, "--snapshot-on", TRIGGER, "--pre", str(PRE), "--max-snapshots", "2")
    snaps = latency_snapshots(manifest(out)) if r.returncode == 0 else []
    check("--max-snapshots 2 keeps 2 snapshots", len(snaps) == 2, f"{len(snaps)}; {r.stderr.strip()}")
    check("--max-snapshots reports the dropped triggers",
          re.search(r"2 snapshot\(s\) triggered, \d+ trigger\(s\) dropped", r.stderr) is not None,
          r.stderr.strip())
    # --min-interval longer than the whole run: one snapshot.
    r = record(out, "--snapshot-on", TRIGGER, "--pre", str(PRE), "--min-interval", "60s")
    snaps = latency_snapshots(manifest(out)) if r.returncode == 0 else []
    check("--min-interval 60s keeps only the first", len(snaps) == 1, f"{len(snaps)}")

    # Grammar errors: exit 2, the column named.
    for spec, want in (("syscall-latency>1xs:nanosleep", "column 18: unit 'xs'"),
                       ("syscall-latency>1ms:nanoslep", "column 21: unknown syscall 'nanoslep' (did you mean nanosleep?)")):
        r = record(out, "--snapshot-on", spec)
        check(f"--snapshot-on '{spec}' is refused (exit 2)", r.returncode == 2 and want in r.stderr,
              f"exit {r.returncode}: {r.stderr.strip()}")

print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
