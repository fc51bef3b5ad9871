#!/usr/bin/env python3
"""The cs_etm recorder end to end without CoreSight (`ptprof record --backend cs_etm` with
$PTPROF_FAKE_AUX): the command is started and traced for real, the AUX ring is paused, cut and
resumed, the sideband ring is read, and a cs_etm perf.data is written with each CPU's trace unit
registers read from sysfs. Only the ETM bytes are not hardware's: a fake kernel replays
simpleperf's real ETMv4 recording `perf_etm.data` and reports its code mappings as MMAP2s. The
cs_etm sysfs is the fixture tree of that recording's device (tests/fixtures/sysfs/cs_etm-a55-5.15).

Checks: the written file's AUXTRACE_INFO holds every CPU's registers as the fixture says (perf's
layout, as `ptprof info` and `perf report -D` read it); ptprof decodes it to exactly the blocks of
the original recording; `perf script` (perf 6.1 + OpenCSD) lists exactly the taken branches of
the reference listing; snapshots start on a 16-byte frame; a .ptar holds the perf.data and
the trigger; a
missing register file is an error naming it, before the command runs, with nothing written.
SKIPs (77) without the shared simpleperf data.
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tally import Tally  # noqa: E402

PTPROF = os.environ["PTPROF"]
SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SYSFS = os.path.join(SOURCE, "tests", "fixtures", "sysfs", "cs_etm-a55-5.15")
DATA = os.path.join(os.environ.get("SHARED_TESTDATA", "../shared/testdata"), "simpleperf")
ETM = os.path.join(DATA, "testdata", "etm")
ORIGINAL = os.path.join(ETM, "perf_etm.data")
REFERENCE = os.path.join(DATA, "reference", "perf_etm.data.script-branches.txt")


def record(out, *options, sysfs=SYSFS, replay=ORIGINAL):
    env = dict(os.environ, PTPROF_FAKE_AUX=replay, PTPROF_SYSFS_ROOT=sysfs)
    return subprocess.run([PTPROF, "record", "--backend", "cs_etm", "--per-thread", "--no-tsc",
                           "-o", out, "--force", *options, "--", "sleep", "0.2"],
                          capture_output=True, text=True, env=env, timeout=120)


def rename_process(path, out, new_pid):
    """Copies the perf.data `path` to `out` with the recorded process's pid and tid (in COMM,
    MMAP2, ITRACE_START, EXIT, AUXTRACE and every sample_id trailer) set to `new_pid`: the
    replayed trace's context ID packets name the process simpleperf traced, and perf attributes
    the trace to the thread a context ID names."""
    b = bytearray(open(path, "rb").read())
    attrs_off, = struct.unpack_from("<Q", b, 24)
    sample_type, = struct.unpack_from("<Q", b, attrs_off + 24)
    trailer = 8 + sum(8 for bit in (2, 6, 7, 10, 16) if sample_type & (1 << bit))  # TIME ID STREAM CPU IDENT
    data_off, data_size = struct.unpack_from("<QQ", b, 40)
    fields = {3: (0, 4), 10: (0, 4), 12: (0, 4), 4: (0, 4, 8, 12)}  # COMM MMAP2 ITRACE_START EXIT
    off = data_off
    while off < data_off + data_size:
        kind, _, size = struct.unpack_from("<IHH", b, off)
        for at in fields.get(kind, ()):
            struct.pack_into("<I", b, off + 8 + at, new_pid)
        if kind < 64 and kind != 9:
            struct.pack_into("<II", b, off + size - trailer, new_pid, new_pid)
        if kind == 71:  # AUXTRACE: tid at body offset 28, the payload follows the record
            struct.pack_into("<I", b, off + 8 + 28, new_pid)
            off += struct.unpack_from("<Q", b, off + 8)[0]
        off += size
    open(out, "wb").write(b)


def blocks(path, symfs):
    r = subprocess.run([PTPROF, "decode", "--format", "jsonl", "--symfs", symfs, path],
                       capture_output=True, text=True, timeout=120)
    recs = [json.loads(l) for l in r.stdout.splitlines() if l.strip()]
    return r, [(b["first_ip"], b["last_ip"], b["exit"], b.get("insns")) for b in recs if "first_ip" in b]


def main():
    t = Tally()
    if not os.path.isfile(ORIGINAL):
        print(f"SKIP: {ORIGINAL} is absent (the shared simpleperf test data)")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        symfs = os.path.join(tmp, "symfs")
        os.makedirs(os.path.join(symfs, "data", "local", "tmp"))
        os.symlink(os.path.abspath(os.path.join(ETM, "etm_test_loop")),
                   os.path.join(symfs, "data", "local", "tmp", "etm_test_loop"))
        out = os.path.join(tmp, "etm.data")
        r = record(out)
        t.check("record --backend cs_etm (fake AUX) exits 0", r.returncode == 0, r.stderr.strip())
        t.check("it says the trace was replayed, not hardware",
                "replaying PTPROF_FAKE_AUX, not hardware" in r.stderr and "bytes of ETM" in r.stderr,
                r.stderr.strip())
        if r.returncode != 0:
            t.finish()

        info = json.loads(subprocess.run([PTPROF, "info", "--format", "json", out],
                                         capture_output=True, text=True).stdout)
        etm = info.get("cs_etm") or {}
        cpus = etm.get("cpus", [])
        t.check("AUXTRACE_INFO: cs_etm, 8 CPUs, snapshot mode",
                len(cpus) == 8 and etm.get("snapshot") in (True, 1), json.dumps(etm)[:300])
        regs = {c.get("cpu"): c.get("registers", c.get("params", {})) for c in cpus}
        cpu7 = regs.get(7, {})
        t.check("CPU 7: TRCCONFIGR 0x40 (context IDs, no timestamps), trace ID 0x1e, the ID "
                "registers of the fixture", cpu7.get("TRCCONFIGR") in (0x40, "0x40")
                and cpu7.get("TRCTRACEIDR") in (0x1e, "0x1e")
                and cpu7.get("TRCIDR1") in (0x4100f422, "0x4100f422"), json.dumps(cpu7))
        streams = info.get("streams", [])
        t.check("one AUX buffer of the whole 384-byte replay", len(streams) == 1
                and streams[0].get("bytes", streams[0].get("size")) == 384, json.dumps(streams)[:300])

        r0, want = blocks(ORIGINAL, symfs)
        r1, got = blocks(out, symfs)
        t.check("the original decodes", r0.returncode == 0 and len(want) > 100, r0.stderr.strip())
        t.check(f"the written perf.data decodes to exactly its blocks ({len(got)})",
                r1.returncode == 0 and got == want, r1.stderr.strip()[:300] or
                f"{len(got)} vs {len(want)} blocks")

        if shutil.which("perf") and os.path.isfile(REFERENCE):
            p = subprocess.run(["perf", "report", "-D", "-i", out], capture_output=True, text=True)
            t.check("perf report -D reads the cs_etm AUXTRACE_INFO",
                    "PERF_RECORD_AUXTRACE_INFO type: 3" in p.stdout and "TRCTRACEIDR" in p.stdout
                    and "I_ATOM" in p.stdout, p.stderr.strip()[-300:])
            renamed = os.path.join(tmp, "renamed.data")
            rename_process(out, renamed, 17235)  # the pid in the replay's context ID packets
            p = subprocess.run(["perf", "script", "-i", renamed, "--symfs", symfs, "--itrace=b",
                                "-F", "ip,addr,dso"], capture_output=True, text=True)
            mine = [l.split() for l in p.stdout.splitlines() if l.strip()]
            ref = [l.split() for l in open(REFERENCE) if l.strip()]
            t.check(f"perf script lists the reference's {len(ref)} branches", mine == ref,
                    f"{len(mine)} lines; stderr {p.stderr.strip()[-200:]}")
        else:
            t.skip("perf script on the written file", "perf or the reference listing is absent")

        # --full: the AUX area in normal mode, drained as it fills: the same 384 bytes, the
        # same blocks, and AUXTRACE_INFO not in snapshot mode.
        whole = os.path.join(tmp, "full.data")
        r = record(whole, "--full")
        info = json.loads(subprocess.run([PTPROF, "info", "--format", "json", whole],
                                         capture_output=True, text=True).stdout or "{}")
        etm = info.get("cs_etm") or {}
        s = info.get("streams", [{}])
        t.check("--full: one AUX buffer of the whole replay, AUXTRACE_INFO not in snapshot mode",
                r.returncode == 0 and s and s[0].get("bytes", s[0].get("size")) == 384
                and etm.get("snapshot") in (False, 0), r.stderr.strip() + json.dumps(etm)[:200])
        r2, got_full = blocks(whole, symfs)
        t.check(f"--full decodes to exactly the original's blocks ({len(got_full)})",
                r2.returncode == 0 and got_full == want, r2.stderr.strip()[:300])

        # The ring cut keeps formatter frames whole: a 100-byte --pre takes the newest 96 bytes.
        small = os.path.join(tmp, "small.data")
        r = record(small, "--pre", "100")
        info = json.loads(subprocess.run([PTPROF, "info", "--format", "json", small],
                                         capture_output=True, text=True).stdout or "{}")
        s = info.get("streams", [{}])
        t.check("--pre 100 keeps 6 whole frames (96 bytes)", r.returncode == 0 and s and
                s[0].get("bytes", s[0].get("size")) == 96, r.stderr.strip() + json.dumps(s)[:200])

        archive = os.path.join(tmp, "etm.ptar")
        r = record(archive)
        t.check("-o X.ptar writes an archive", r.returncode == 0, r.stderr.strip())
        info = json.loads(subprocess.run([PTPROF, "info", "--format", "json", archive],
                                         capture_output=True, text=True).stdout or "{}")
        m = info.get("manifest", {})
        triggers = m.get("triggers", [])
        t.check("the archive holds the cs_etm perf.data, marked as a fake replay, with the "
                "snapshot's trigger", m.get("source", {}).get("kind") == "cs_etm-perf-data"
                and m.get("pt", {}).get("config", {}).get("fake_aux_replay") == 1 and len(triggers) == 1
                and triggers[0].get("label") == "exit" and triggers[0].get("tid", 0) > 0,
                json.dumps(m)[:400])
        t.check("the binary the sideband names but this machine lacks is warned about",
                "/data/local/tmp/etm_test_loop" in r.stderr and "not found" in r.stderr,
                r.stderr.strip())

        broken = os.path.join(tmp, "sysfs")
        shutil.copytree(SYSFS, broken)
        os.remove(os.path.join(broken, "bus/event_source/devices/cs_etm/cpu3/trcidr/trcidr2"))
        bad = os.path.join(tmp, "bad.data")
        r = record(bad, sysfs=broken)
        t.check("a missing register file: exit 1, the file named, nothing written",
                r.returncode == 1 and "cpu3/trcidr/trcidr2" in r.stderr and not os.path.exists(bad),
                f"exit {r.returncode}: {r.stderr.strip()}")
        r = record(bad, "--sink", "tmc_etr9")
        t.check("an unknown sink: exit 1, the sinks there are listed",
                r.returncode == 1 and "tmc_etr9" in r.stderr and "tmc_etr0" in r.stderr,
                f"exit {r.returncode}: {r.stderr.strip()}")
    t.finish()


sys.exit(main())
