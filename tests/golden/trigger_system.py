#!/usr/bin/env python3
"""Triggers on the kernel lab (`ptprof record --backend qemu-system --snapshot-on ...`), live.

One recording of lab_syscalls 3 with two triggers:
- addr=__x64_sys_getpid (a kernel symbol, resolved through the guest's kallsyms): exactly one
  snapshot per getpid call (3), each decoding without errors and ending inside the handler.
- every=20us (the guest's emulated clock: 2 GHz TSC, so 40,000 TSC ticks): consecutive every=
  snapshots at least a period apart and at most a period plus 1/64 period plus one block later
  (ticks are fed every 1/64 period, after whole blocks) - emulated time, not the host's, so the
  host's load changes nothing.
Also: signal= is refused with exit 2 naming the backends that observe it.
SKIPs (77) without qemu-system-x86_64, the lab kernel or busybox-static.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

PTPROF = os.environ["PTPROF"]
BUILD = os.path.dirname(PTPROF)
WORKLOAD = os.path.join(BUILD, "src", "record", "qemu_system", "lab_syscalls")
LAB_DIR = os.environ.get("PTPROF_LAB_DIR", os.path.expanduser("~/.cache/ptprof/lab"))
KERNEL = os.environ.get("PTPROF_LAB_KERNEL", os.path.join(LAB_DIR, "vmlinuz"))
PERIOD_TSC = 40000  # every=20us at the encoder's 2 GHz

passed = failed = 0


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"ok    {name}")
    else:
        failed += 1
        print(f"FAIL  {name}: {detail}")


def main():
    missing = [what for what, ok in (
        ("qemu-system-x86_64", shutil.which("qemu-system-x86_64")),
        (f"the lab kernel {KERNEL}", os.path.exists(KERNEL)),
        ("/bin/busybox (busybox-static)", os.path.exists("/bin/busybox"))) if not ok]
    if missing:
        print("SKIP: missing " + ", ".join(missing))
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "t.ptar")
        r = subprocess.run([PTPROF, "record", "--backend", "qemu-system", "-o", out,
                            "--snapshot-on", "addr=__x64_sys_getpid", "--snapshot-on", "every=20us",
                            "--", WORKLOAD, "3"], capture_output=True, text=True, timeout=240)
        check("record exits 0", r.returncode == 0, r.stderr[-400:])
        if r.returncode != 0:
            return 1
        info = subprocess.run([PTPROF, "info", "--format", "json", out], capture_output=True,
                              text=True)
        triggers = json.loads(info.stdout)["manifest"].get("triggers", [])
        addr = [t for t in triggers if t.get("label") == "addr=__x64_sys_getpid"]
        every = [t for t in triggers if t.get("label") == "every=20us"]
        check("addr=: one snapshot per getpid call (3)", len(addr) == 3, str(triggers))
        for t in addr:
            d = subprocess.run([PTPROF, "decode", "--insn", "--stream", t["stream"], out],
                               capture_output=True, text=True)
            insns = [x for x in d.stdout.splitlines() if not x.startswith("[")]
            # A decode error is a gap event ("[gap: REASON at offset ..."); other events may
            # name symbols such as error_entry, where a snapshot can begin.
            bad = [x for x in d.stdout.splitlines() if x.startswith("[gap")]
            check(f"addr=: {t['stream']} decodes without errors and ends in __x64_sys_getpid",
                  d.returncode == 0 and not d.stderr.strip() and insns and
                  "<__x64_sys_getpid" in insns[-1] and not bad,
                  f"exit {d.returncode}; last: {insns[-1] if insns else '(none)'}; "
                  f"{bad[:3]}; {d.stderr[-200:]}")
        check("every=: several periodic snapshots", len(every) >= 3, str(every))
        tscs = [t["tsc"] for t in every]
        gaps = [b - a for a, b in zip(tscs, tscs[1:])]
        check(f"every=: consecutive snapshots a period apart, within 1/64 period plus a block "
              f"(gaps {gaps})",
              all(PERIOD_TSC <= g <= PERIOD_TSC + PERIOD_TSC // 64 + 2000 for g in gaps), str(gaps))

        r = subprocess.run([PTPROF, "record", "--backend", "qemu-system", "-o",
                            os.path.join(tmp, "s.ptar"), "--snapshot-on", "signal=USR2", "--",
                            WORKLOAD, "1"], capture_output=True, text=True, timeout=60)
        check("signal= is refused on qemu-system (exit 2, naming --backend qemu)",
              r.returncode == 2 and "signal=" in r.stderr and "--backend qemu" in r.stderr,
              r.stderr)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
