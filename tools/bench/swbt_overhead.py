#!/usr/bin/env python3
"""Overhead of the software branch tracer (issue 9 part 4; docs/swbt.md "Overhead").

Runs each workload natively and with libptprof-swbt.so preloaded at sampling periods of 0.5, 1, 2,
5 and 10 ms of task-clock, REPS times each, and prints per workload and period the median CPU time
(user + system of the program, from wait4) and the overhead against the native median of the same
invocation, with the breakdown Break Dancing reports, from the tracer's own counters:

  decode    time decoding ahead (cache misses), measured with rdtsc in the handlers
  sampling  time re-arming the task-clock sampler (ioctl), measured in the handlers
  bp arm    time moving/arming/disarming the breakpoint (ioctls), measured in the handlers
  handlers  everything else inside the two signal handlers (evaluation, bookkeeping)
  kernel    the rest of the overhead: debug traps, signal delivery and sigreturn, which the
            handlers cannot see (overhead - all of the above)

and per workload the branch mix: s (fraction of walked branches resolved statically), t (fraction
of breakpoint-evaluated branches that were taken), the breakpoint usefulness factor t/(1-s) (taken
branches recorded per branch walked dynamically, as the paper defines it) and, measured, the taken
branches recorded per breakpoint hit.

usage: swbt_overhead.py BUILD_DIR [--reps N] [--periods 0.5,1,2,5,10] [--workloads a,b]
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time


def cpu_run(argv, env, stdin=None):
    """Runs argv; returns (cpu seconds of the child, wall seconds, exit status)."""
    start = time.perf_counter()
    p = subprocess.Popen(argv, env=env, stdin=stdin, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - start
    return usage.ru_utime + usage.ru_stime, wall, status


def workloads(build, tmp):
    wl = os.path.join(build, "tools", "workloads")
    rec = os.path.join(build, "src", "record")
    items = [
        ("recursion", [os.path.join(rec, "workload_recursion"), "36"], None),
        ("threads", [os.path.join(rec, "workload_threads")], None),
    ]
    # The paper's microbenchmarks (tools/workloads, as `ptprof sweep` builds them; compiled here
    # with the same flags when the build has none).
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "workloads")
    for name in ["fib", "tailfact", "sort", "pisum", "parseint"]:
        exe = os.path.join(wl, "sweep_" + name)
        if not os.path.exists(exe) and os.path.exists(os.path.join(src, name + ".c")):
            exe = os.path.join(tmp, "sweep_" + name)
            subprocess.run(["cc", "-O2", "-fno-inline-small-functions", "-o", exe,
                            os.path.join(src, name + ".c"), "-lm"], check=True)
        if os.path.exists(exe):
            items.append((name, [exe], None))
    # Debian tools on a fixed input: 8 MB of deterministic text.
    data = os.path.join(tmp, "input.txt")
    with open(data, "w") as f:
        x = 12345
        for i in range(400000):
            x = (x * 1103515245 + 12345) & 0x7fffffff
            f.write(f"line {x % 100000:05d} {'abcdefghij'[x % 10] * (x % 13)}\n")
    items.append(("gzip", ["gzip", "-c", data], None))
    items.append(("sort(1)", ["sort", data], None))
    return items


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--periods", default="0.5,1,2,5,10")
    ap.add_argument("--workloads", default="")
    args = ap.parse_args()
    lib = os.path.join(os.path.abspath(args.build), "src", "record", "swbt", "libptprof-swbt.so")
    if not os.path.exists(lib):
        sys.exit(f"{lib}: not built")
    periods = [float(p) for p in args.periods.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        items = workloads(args.build, tmp)
        if args.workloads:
            keep = args.workloads.split(",")
            items = [w for w in items if w[0] in keep]
        print("| workload | period | native CPU s | traced CPU s | overhead | bursts | bp hits | "
              "µs/bp | decode | sampling | bp arm | handlers | kernel |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        mix = {}
        for name, argv, _ in items:
            native = statistics.median(cpu_run(argv, dict(os.environ))[0] for _ in range(args.reps))
            agg = {}
            for period in periods:
                times, counters = [], []
                for _ in range(args.reps):
                    d = tempfile.mkdtemp(dir=tmp)
                    env = dict(os.environ, LD_PRELOAD=lib, PTPROF_SWBT_DIR=d,
                               PTPROF_SWBT_PERIOD_NS=str(int(period * 1e6)), PTPROF_SWBT_DEPTH="16")
                    cpu, _, _ = cpu_run(argv, env)
                    times.append(cpu)
                    total = {}
                    for fn in os.listdir(d):
                        if fn.startswith("counters."):
                            c = json.load(open(os.path.join(d, fn)))
                            r = c.get("tsc_per_ns") or 1
                            for k, v in c.items():
                                if isinstance(v, int):
                                    total[k] = total.get(k, 0) + (v / r if k.startswith("ticks_") else v)
                    counters.append(total)
                traced = statistics.median(times)
                mid = counters[times.index(traced)] if traced in times else counters[0]
                for k, v in mid.items():
                    agg[k] = agg.get(k, 0) + v
                over = traced - native
                ns = lambda k: mid.get(k, 0) / 1e9
                decode, sampling, arm = ns("ticks_decode"), ns("ticks_sampler_arm"), ns("ticks_breakpoint_arm")
                handlers = ns("ticks_sample_handler") + ns("ticks_breakpoint_handler") - decode - sampling - arm
                kernel = over - decode - sampling - arm - handlers
                hits = mid.get("breakpoint_hits", 0)
                pct = lambda x: f"{100 * x / native:.1f}%" if native > 0 else "-"
                per_bp = f"{1e6 * over / hits:.0f}" if hits else "-"
                print(f"| {name} | {period:g} ms | {native:.3f} | {traced:.3f} | {pct(over)} | "
                      f"{int(mid.get('bursts', 0))} | {int(hits)} | {per_bp} | {pct(decode)} | "
                      f"{pct(sampling)} | {pct(arm)} | {pct(handlers)} | {pct(kernel)} |",
                      flush=True)
            mix[name] = agg
        print()
        print("| workload | s (static) | t (taken at bp) | t/(1-s) | recorded per bp hit |")
        print("|---|---:|---:|---:|---:|")
        for name, c in mix.items():
            walked = c.get("static_branches", 0) + c.get("dynamic_branches", 0)
            s = c.get("static_branches", 0) / walked if walked else 0
            t = c.get("dynamic_taken", 0) / c["dynamic_branches"] if c.get("dynamic_branches") else 0
            factor = t / (1 - s) if s < 1 else float("inf")
            per_hit = c.get("branches_recorded", 0) / c["breakpoint_hits"] if c.get("breakpoint_hits") else 0
            print(f"| {name} | {s:.3f} | {t:.3f} | {factor:.2f} | {per_hit:.2f} |")


if __name__ == "__main__":
    main()
