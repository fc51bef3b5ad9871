#!/usr/bin/env python3
"""End-to-end check of `ptprof record --backend qemu` (skips when qemu-x86_64 is not installed).

1. A libc-free program (the sample of traces/sample) recorded under QEMU decodes to exactly the
   instruction addresses single-stepping it with ptrace gave (traces/sample/sample.ips), and the
   decoded count equals QEMU's own inline instruction counter (the plugin's mode=count).
2. A dynamically linked C program (recursion, indirect calls, libc) decodes from its .ptar with
   `ptprof decode`, with symbols; its instruction count relates exactly to QEMU's counter: plus
   the rep-string iterations the recorder folded (PT reports a rep instruction once, QEMU counts
   every iteration), minus the page-crossing block ends QEMU's inline counter misses, plus those
   that ran again in a block of their own (one execution, counted there).
3. Bad input: a command that does not exist, qemu missing, a program that crashes (the archive is
   written and decodes), an output that exists, a snapshot ring too small, a file-size limit, a
   full disk and a disk full now and then (OVF) (when a small tmpfs can be mounted).
"""
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time

PTPROF = os.environ["PTPROF"]
ROOT = os.environ["SOURCE_ROOT"]
BUILD = os.path.dirname(PTPROF)
PLUGIN = os.path.join(BUILD, "src", "record", "qemu", "libptprof_qemu.so")
SAMPLE = os.path.join(BUILD, "tools", "sample")
WORKLOADS = os.path.join(BUILD, "src", "record")

passed = failed = 0


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"ok    {name}")
    else:
        failed += 1
        print(f"FAIL  {name}: {detail}")


def record(out, cmd, *options):
    return subprocess.run([PTPROF, "record", "-o", out, *options, "--", *cmd],
                          capture_output=True, text=True)


def decoded_ips(archive):
    out = subprocess.run([PTPROF, "decode", "--insn", "--format", "jsonl", archive],
                         capture_output=True, text=True)
    if out.returncode != 0:
        return None, out.stderr.strip()
    return [int(json.loads(l)["ip"], 16) for l in out.stdout.splitlines() if '"size"' in l], ""


def qemu_count(cmd):
    with tempfile.NamedTemporaryFile() as f:
        subprocess.run(["qemu-x86_64", "-plugin", f"{PLUGIN},out={f.name},mode=count", *cmd],
                       capture_output=True)
        text = open(f.name).read()
    m = re.search(r"insns (\d+)", text)
    return int(m.group(1)) if m else None


# 0. The stored traces of traces/qemu/ give their expected outputs (no qemu needed).
expected_dir = os.path.join(ROOT, "traces", "qemu", "expected")
with open(os.path.join(expected_dir, "commands.txt")) as f:
    commands = [l.rstrip("\n") for l in f if l.strip() and not l.startswith("#")]
for line in commands:
    name, args = line.split("\t", 1)
    out = subprocess.run([PTPROF, *args.split()], cwd=ROOT, capture_output=True, text=True)
    got = out.stdout
    if name.startswith("decode-summary"):
        got = got[got.find("summary:"):] if "summary:" in got else got
    with open(os.path.join(expected_dir, name)) as f:
        want = f.read()
    diff = next((f"line {i + 1}: got {a!r}, expected {b!r}"
                 for i, (a, b) in enumerate(zip(got.splitlines(), want.splitlines())) if a != b),
                f"{len(got.splitlines())} lines, expected {len(want.splitlines())}")
    check(f"stored trace: {name}", out.returncode == 0 and got == want, diff)

if not shutil.which("qemu-x86_64"):
    print("SKIP: qemu-x86_64 is not installed (Debian package qemu-user, tools/setup.sh): "
          "not recording")
    print(f"{passed} passed, {failed} failed, 1 skipped")
    sys.exit(1 if failed else 0)

with tempfile.TemporaryDirectory() as tmp:
    # 1. libc-free sample: three independent views agree.
    out = os.path.join(tmp, "sample.ptar")
    r = record(out, [SAMPLE], "--psb-period", "64")
    check("sample: record", r.returncode == 0, r.stderr.strip())
    ips, err = decoded_ips(out)
    with open(os.path.join(ROOT, "traces", "sample", "sample.ips")) as f:
        stepped = [int(l, 16) for l in f if l.strip()]
    check("sample: decode == ptrace single-step addresses", ips == stepped,
          err or f"{len(ips or [])} decoded, {len(stepped)} stepped")
    check("sample: decoded count == QEMU's inline counter", ips is not None and len(ips) == qemu_count([SAMPLE]),
          f"{len(ips or [])} vs {qemu_count([SAMPLE])}")

    # 2. A dynamically linked program with timing packets.
    out = os.path.join(tmp, "recursion.ptar")
    prog = [os.path.join(WORKLOADS, "workload_recursion"), "14"]
    r = record(out, prog, "--mtc-period", "3", "--cyc-threshold", "2", "--tnt64")
    check("recursion: record", r.returncode == 0, r.stderr.strip())
    m = re.search(r"(\d+) instructions.*?(\d+) rep-string iterations folded.*?(\d+) page-crossing"
                  r" block ends, (\d+) of them run again", r.stderr, re.S)
    ips, err = decoded_ips(out)
    if m and ips is not None:
        insns, reps, crossings, reruns = (int(m.group(k)) for k in range(1, 5))
        check("recursion: decode gives every recorded instruction", len(ips) == insns,
              f"{len(ips)} decoded, {insns} recorded")
        count = qemu_count(prog)
        # The exact relation (docs/record.md, "Cross-checks"): QEMU's inline counter counts every
        # rep iteration (PT: one instruction) and never counts an instruction that spans two pages
        # where it ends a block announced short (QEMU 7.2 drops its inline op), which counts only
        # when it runs again in a block of its own (one execution, folded by the recorder).
        check("recursion: decoded + rep iterations - page-crossing block ends + those run again"
              " == QEMU's inline counter",
              count is not None and len(ips) + reps - crossings + reruns == count,
              f"{len(ips)} + {reps} - {crossings} + {reruns} vs {count}")
        print(f"info  recursion: decoded {len(ips)}, rep iterations folded {reps}, "
              f"page-crossing block ends {crossings}, run again {reruns}, QEMU counter {count}")
        text = subprocess.run([PTPROF, "decode", out], capture_output=True, text=True).stdout
        check("recursion: decode shows the program's and libc's symbols",
              "<fib" in text and "<main" in text and "<qsort" in text, text[:300])
    else:
        check("recursion: decode", False, err or r.stderr)

    # 3. Bad input.
    r = record(os.path.join(tmp, "none.ptar"), ["ptprof-no-such-command"])
    check("missing command: exit 1, one line naming it",
          r.returncode == 1 and "ptprof-no-such-command" in r.stderr and r.stderr.count("\n") == 1,
          r.stderr)
    r = record(os.path.join(tmp, "noqemu.ptar"), [SAMPLE], "--qemu", "/nonexistent/qemu-x86_64")
    check("qemu missing: exit 1, says what to install", r.returncode == 1 and "qemu-user" in r.stderr,
          r.stderr)
    out = os.path.join(tmp, "crash.ptar")
    r = record(out, [os.path.join(WORKLOADS, "workload_crash")])
    ips, err = decoded_ips(out)
    check("crashing program: exit 1 naming the signal, the archive is written and decodes",
          r.returncode == 1 and "signal 11" in r.stderr and ips is not None and len(ips) > 1000,
          r.stderr + err)
    r = record(out, [SAMPLE])
    check("existing output: refused without --force", r.returncode == 1 and "exists" in r.stderr,
          r.stderr)
    r = record(os.path.join(tmp, "ring.ptar"), [SAMPLE], "--snapshot-on", "insns=100",
               "--buffer-size", "4096", "--psb-period", "4096")
    check("a snapshot ring smaller than two PSB periods is refused (exit 2, naming both)",
          r.returncode == 2 and "--buffer-size 4096" in r.stderr and "--psb-period 4096" in r.stderr,
          r.stderr)
    # A file-size limit (ulimit -f): no SIGXFSZ kills anything; the archive is kept.
    limited = os.path.join(tmp, "limited.ptar")
    limit = 512 * 1024
    r = subprocess.run([PTPROF, "record", "-o", limited, "--",
                        os.path.join(WORKLOADS, "workload_recursion"), "22"],
                       capture_output=True, text=True,
                       preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit)))
    ips, err = decoded_ips(limited) if os.path.exists(limited) else (None, "no archive")
    check("ulimit -f: exit 1 naming the failure, what was recorded is a valid archive",
          r.returncode == 1 and "File too large" in r.stderr and ips is not None and len(ips) > 1000,
          r.stderr + err)
    full = os.path.join(tmp, "full")
    os.mkdir(full)
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", full],
                      capture_output=True).returncode == 0:
        try:
            # The archive with the binaries does not fit: it is written without them.
            big = os.path.join(full, "big.ptar")
            r = record(big, [os.path.join(WORKLOADS, "workload_recursion"), "20"])
            ips, err = decoded_ips(big) if os.path.exists(big) else (None, "no archive")
            check("full disk: exit 1 naming the failure, what was recorded is a valid archive",
                  r.returncode == 1 and "No space left" in r.stderr and ips is not None
                  and len(ips) > 1000, r.stderr + err)
            if os.path.exists(big):
                os.remove(big)
            # The stream kept on a disk that fills: the plugin loses words (OVF), then stops.
            r = record(big, [os.path.join(WORKLOADS, "workload_recursion"), "20"], "--keep-stream")
            check("full disk with --keep-stream: exit 1 naming the failure",
                  r.returncode == 1 and "No space left" in r.stderr, r.stderr)
        finally:
            subprocess.run(["umount", full], capture_output=True)
        # A disk that is full now and then (another program fills it for 30 ms every 60 ms,
        # for half a second once the stream has its first megabyte): the plugin drops the words that find no room (as PT
        # drops packets it cannot write) and goes on: OVF packets, which the decoder reports as
        # overflow gaps before resuming. ptprof frees the part of the stream it has read.
        if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", full],
                          capture_output=True).returncode == 0:
            try:
                squeezed = os.path.join(full, "ovf.ptar")
                stop = threading.Event()

                def fill():
                    filler = os.path.join(full, "filler")
                    stream = squeezed + ".qemu-stream"
                    deadline = time.monotonic() + 10
                    while not stop.is_set() and time.monotonic() < deadline and (
                            not os.path.exists(stream) or os.path.getsize(stream) < (1 << 20)):
                        time.sleep(0.005)  # until the plugin has written a first megabyte
                    deadline = time.monotonic() + 0.5
                    # Until ptprof has read the whole stream (it removes it before it writes
                    # the archive, which must find room).
                    while time.monotonic() < deadline and os.path.exists(stream):
                        try:
                            with open(filler, "wb") as f:
                                while os.path.exists(stream):
                                    f.write(b"\0" * 65536)
                                    f.flush()
                        except OSError:
                            pass
                        for _ in range(6):
                            if not os.path.exists(stream):
                                break
                            time.sleep(0.005)
                        os.remove(filler)
                        time.sleep(0.03)

                filler_thread = threading.Thread(target=fill)
                filler_thread.start()
                r = record(squeezed, [os.path.join(WORKLOADS, "workload_recursion"), "29"])
                stop.set()
                filler_thread.join()
                m = re.search(r"lost (\d+) execution words; the trace has (\d+) OVF", r.stderr)
                # The block flow, streamed: the gaps, and the instructions after the first.
                decode = subprocess.Popen([PTPROF, "decode", "--format", "jsonl", squeezed],
                                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                          text=True)
                gaps, overflow, after = 0, 0, 0
                for line in decode.stdout:
                    if '"event":"gap"' in line:
                        gaps += 1
                        overflow += '"reason":"overflow"' in line
                    elif overflow and '"insns":' in line:
                        after += json.loads(line)["insns"]
                decode.wait()
                check("disk full now and then: words lost, OVF in the trace, decode reports overflow "
                      "gaps and resumes after them",
                      r.returncode == 0 and m is not None and int(m.group(2)) > 0
                      and overflow == int(m.group(2)) and gaps == overflow and after > 1000,
                      f"exit {r.returncode}: {r.stderr.strip()}; {overflow} overflow gaps of "
                      f"{gaps}, {after} instructions after the first")
            finally:
                subprocess.run(["umount", full], capture_output=True)
    else:
        print("skip  full disk: cannot mount a small tmpfs here")

print(f"{passed} passed, {failed} failed, 0 skipped")
sys.exit(1 if failed else 0)
