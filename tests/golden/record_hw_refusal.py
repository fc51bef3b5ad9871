#!/usr/bin/env python3
"""`ptprof record --backend intel_pt|cs_etm` where they cannot run: exit 1 and one line saying
exactly why (no PMU in /sys/bus/event_source/devices and what the CPU is, perf_event_paranoid
without CAP_PERFMON/CAP_SYS_ADMIN) and which backend works instead. Runs against this machine's
real sysfs (when it has no intel_pt PMU) and against fake roots (PTPROF_SYSFS_ROOT with the trees
of tests/fixtures/sysfs, PTPROF_PROC_ROOT with a fake /proc), so the messages are checked on any
machine.
"""
import os
import subprocess
import sys
import tempfile

PTPROF = os.environ["PTPROF"]
ROOT = os.environ["SOURCE_ROOT"]
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "sysfs")

passed = failed = 0


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"ok    {name}")
    else:
        failed += 1
        print(f"FAIL  {name}: {detail}")


def record(backend, env=None, *options):
    with tempfile.TemporaryDirectory() as tmp:
        return subprocess.run([PTPROF, "record", "--backend", backend, "-o",
                               os.path.join(tmp, "x.ptar"), *options, "--", "true"],
                              capture_output=True, text=True, env={**os.environ, **(env or {})})


def fake_proc(tmp, vendor, model, vm, paranoid, cap_eff):
    os.makedirs(os.path.join(tmp, "sys", "kernel"), exist_ok=True)
    os.makedirs(os.path.join(tmp, "self"), exist_ok=True)
    with open(os.path.join(tmp, "cpuinfo"), "w") as f:
        f.write(f"processor\t: 0\nvendor_id\t: {vendor}\nmodel name\t: {model}\n"
                f"flags\t\t: fpu tsc{' hypervisor' if vm else ''}\n")
    with open(os.path.join(tmp, "sys", "kernel", "perf_event_paranoid"), "w") as f:
        f.write(f"{paranoid}\n")
    with open(os.path.join(tmp, "self", "status"), "w") as f:
        f.write(f"Name:\tptprof\nCapEff:\t{cap_eff}\n")
    return tmp


# This machine, as it is.
if not os.path.exists("/sys/bus/event_source/devices/intel_pt"):
    r = record("intel_pt")
    check("intel_pt here: exit 1", r.returncode == 1, f"exit {r.returncode}")
    check("intel_pt here: names the missing PMU",
          "no intel_pt PMU in /sys/bus/event_source/devices (it has: " in r.stderr, r.stderr)
    check("intel_pt here: offers qemu, qemu-system and swbt",
          all(b in r.stderr for b in ("--backend qemu ", "qemu-system", "swbt")), r.stderr)
    check("intel_pt here: one line", r.stderr.count("\n") == 1, r.stderr)
    print("      " + r.stderr.strip())
else:
    print("skip  this machine has an intel_pt PMU: the refusal on it is not checked")
if not os.path.exists("/sys/bus/event_source/devices/cs_etm"):
    r = record("cs_etm")
    check("cs_etm here: exit 1 naming the missing PMU",
          r.returncode == 1 and "no cs_etm PMU in /sys/bus/event_source/devices" in r.stderr,
          r.stderr)
    print("      " + r.stderr.strip())

with tempfile.TemporaryDirectory() as tmp:
    amd = {"PTPROF_SYSFS_ROOT": os.path.join(FIXTURES, "amd-vm-6.18"),
           "PTPROF_PROC_ROOT": fake_proc(os.path.join(tmp, "amd"), "AuthenticAMD", "AMD EPYC 7B13",
                                         True, 2, "000001ffffffffff")}
    r = record("intel_pt", amd)
    want = ("ptprof: record --backend intel_pt: no intel_pt PMU in " + amd["PTPROF_SYSFS_ROOT"] +
            "/bus/event_source/devices (it has: breakpoint, msr, software, tracepoint, uprobe): "
            "this is an AMD CPU (AMD EPYC 7B13, in a VM): Intel PT exists only on Intel CPUs; use "
            "--backend qemu")
    check("fake AMD VM: the exact reason", r.returncode == 1 and r.stderr.startswith(want),
          r.stderr)
    intel_vm = {**amd, "PTPROF_PROC_ROOT": fake_proc(os.path.join(tmp, "ivm"), "GenuineIntel",
                                                     "Intel Xeon Gold 6148", True, 2, "0")}
    r = record("intel_pt", intel_vm)
    check("fake Intel VM: no PT passthrough",
          r.returncode == 1 and "a VM on an Intel CPU (Intel Xeon Gold 6148) without PT passthrough"
          in r.stderr, r.stderr)
    r = record("cs_etm", amd)
    check("cs_etm on x86: CoreSight needs Arm",
          r.returncode == 1 and "CoreSight ETM/ETE exists only on Arm CPUs" in r.stderr, r.stderr)
    pt_host = {"PTPROF_SYSFS_ROOT": os.path.join(FIXTURES, "intel_pt-skylake-6.8"),
               "PTPROF_PROC_ROOT": fake_proc(os.path.join(tmp, "skl"), "GenuineIntel",
                                             "Intel Core i7-6700", False, 2, "0000000000000000")}
    r = record("intel_pt", pt_host)
    check("fake PT host, paranoid 2, no capability: names paranoid and CAP_PERFMON",
          r.returncode == 1 and "perf_event_paranoid is 2" in r.stderr and "CAP_PERFMON" in r.stderr,
          r.stderr)
    r = record("intel_pt", pt_host, "--snapshot-on", "syscall-latency>200us")
    check("syscall triggers need paranoid -1", "perf_event_paranoid <= -1" in r.stderr, r.stderr)

print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
