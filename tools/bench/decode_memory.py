#!/usr/bin/env python3
"""decode_memory: the peak memory of ptprof commands beside the size of the trace they read.

Runs each command, samples /proc/PID/status every 10 ms, and prints the peak heap-like memory
(RssAnon: what the process allocated), the peak file-backed memory (RssFile: mapped files such as
a trace or a perf.data, which the kernel can drop and read again) and the kernel's own peak
(VmHWM, both together), each also as a ratio to the trace's size. A decode that streams its input
keeps RssAnon far below the trace size; one that reads the trace into the heap first shows at
least 1.0x there.

  tools/bench/decode_memory.py --trace-bytes N -- CMD ARGS... [--- CMD ARGS...]...
"""
import argparse
import subprocess
import sys
import time


def status_kb(pid, fields):
    values = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                key, _, rest = line.partition(":")
                if key in fields:
                    values[key] = int(rest.split()[0])
    except (FileNotFoundError, ProcessLookupError):
        return None
    return values


def measure(command):
    fields = ("RssAnon", "RssFile", "VmHWM")
    peaks = dict.fromkeys(fields, 0)
    start = time.monotonic()
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    while proc.poll() is None:
        values = status_kb(proc.pid, fields)
        if values:
            for key, value in values.items():
                peaks[key] = max(peaks[key], value)
        time.sleep(0.01)
    return proc.returncode, time.monotonic() - start, peaks


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trace-bytes", type=int, required=True, help="the trace's size, for the ratios")
    parser.add_argument("commands", nargs=argparse.REMAINDER, help="-- CMD ARGS [--- CMD ARGS]...")
    args = parser.parse_args()
    words = args.commands[1:] if args.commands[:1] == ["--"] else args.commands
    commands, current = [], []
    for word in words:
        if word == "---":
            commands.append(current)
            current = []
        else:
            current.append(word)
    if current:
        commands.append(current)
    if not commands:
        parser.error("no command")
    mb = args.trace_bytes / 2**20
    print(f"trace: {mb:.1f} MiB")
    print(f"{'peak RssAnon':>18} {'peak RssFile':>18} {'peak VmHWM':>18} {'seconds':>8}  command")
    failed = False
    for command in commands:
        code, seconds, peaks = measure(command)
        failed |= code != 0
        cells = [f"{peaks[k] / 1024:8.1f} MiB {peaks[k] * 1024 / args.trace_bytes:5.2f}x"
                 for k in ("RssAnon", "RssFile", "VmHWM")]
        note = "" if code == 0 else f"  (exit {code})"
        print(f"{cells[0]:>18} {cells[1]:>18} {cells[2]:>18} {seconds:8.1f}  {' '.join(command)}{note}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
