#!/usr/bin/env python3
"""`ptprof stacks` on the kernel lab traces: the tree's reports agree with each other, the sunburst
HTML is self-contained and loads in headless Chromium, and the nop-vs-function diff shows ftrace.

traces/lab/syscalls-nop.ptar and syscalls-function.ptar are the same workload (lab_syscalls 10)
with ftrace's `nop` and `function` tracers (docs/lab.md). Checked here:
- the totals of `--format json` equal the text header's, the folded stacks' sums (by instructions
  and by ns) and the totals of the JSON the HTML embeds;
- the HTML has no network references (no http(s) or protocol-relative src/href, no @import, no
  url(http...)), and the embedded JSON parses;
- `--diff nop function` lists ftrace functions (function_trace_call, ftrace_*) as only-in-B paths,
  below the function that starts the most only-in-B weight (the tracer's trampoline), keeps most
  of the baseline's paths, and its HTML embeds both trees with the totals of the single-input runs;
- a diff of two different programs (the lab trace against traces/qemu/gzip.ptar) warns how little
  they share; a symbol that never runs, an empty --interval and an unreadable file are one-line
  errors with exit status 1, a missing input a usage error (2);
- when chromium is installed (tools/setup.sh), both pages load headless without console messages
  and their screenshots are not blank (else SKIP).
"""
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

sys.path.insert(0, os.path.dirname(__file__))
from tally import Tally  # noqa: E402

PTPROF = os.environ["PTPROF"]
ROOT = os.environ["SOURCE_ROOT"]
NOP = os.path.join(ROOT, "traces", "lab", "syscalls-nop.ptar")
FUNCTION = os.path.join(ROOT, "traces", "lab", "syscalls-function.ptar")
OTHER_PROGRAM = os.path.join(ROOT, "traces", "qemu", "gzip.ptar")

NETWORK = re.compile(r"""(?:src|href)\s*=\s*["']?\s*(?:https?:)?//|@import|url\(\s*["']?https?:""", re.I)
DATA = re.compile(r'<script type="application/json" id="stacks-data">(.*?)</script>', re.S)


def run(args, timeout=300):
    return subprocess.run([PTPROF, "stacks"] + args, capture_output=True, text=True, timeout=timeout)


def embedded(html):
    m = DATA.search(html)
    return json.loads(m.group(1)) if m else None


def folded_sum(text):
    return sum(int(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line)


def png_is_blank(path):
    """True when every pixel row of the PNG is the same (an empty page)."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        return True
    pos, idat, width, bpp = 8, b"", 0, 4
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width = struct.unpack(">I", body[:4])[0]
            bpp = {2: 3, 6: 4, 0: 1, 4: 2}.get(body[9], 4)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = 1 + width * bpp
    rows = {raw[i + 1:i + stride] for i in range(0, len(raw), stride)}
    # Filtered rows: a blank page compresses to a handful of distinct rows.
    return len(rows) < 20


def chromium_check(t, name, html_path, tmp):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        t.skip(name + " headless", "chromium not installed (tools/setup.sh installs it)")
        return
    png = os.path.join(tmp, os.path.basename(html_path) + ".png")
    profile = tempfile.mkdtemp(dir=tmp)
    try:
        p = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                            "--user-data-dir=" + profile, "--enable-logging=stderr", "--v=0",
                            "--window-size=1200,900", "--screenshot=" + png, "file://" + html_path],
                           capture_output=True, text=True, timeout=90)
    except subprocess.TimeoutExpired:
        t.report(name + " headless", "chromium did not finish in 90 s")
        return
    console = [line for line in p.stderr.splitlines() if "CONSOLE" in line]
    t.check(name + " loads without console messages", not console, "; ".join(console[:3]))
    t.check(name + " screenshot is not blank", os.path.exists(png) and not png_is_blank(png),
            "no screenshot" if not os.path.exists(png) else "blank screenshot")


def single(t, tmp):
    """Returns the JSON totals of both lab traces, for the diff checks."""
    totals = {}
    for path in (NOP, FUNCTION):
        name = os.path.basename(path)
        html = os.path.join(tmp, name + ".html")
        p = run([path, "--format", "json", "--html", html])
        if p.returncode != 0:
            t.report(name + " json", p.stderr.strip())
            continue
        tree = json.loads(p.stdout)
        insns, ns = tree["total_insns"], tree["total_ns"]
        totals[path] = (insns, ns)
        t.check(name + " has instructions and time", insns > 0 and ns > 0, f"{insns} insns, {ns} ns")
        t.check(name + " tree root totals", tree["tree"]["total_insns"] == insns)

        text = run([path, "--min-share", "1"])
        m = re.search(r"^total: (\d+) instructions, (\d+) ns", text.stdout, re.M)
        t.check(name + " text totals", m and (int(m.group(1)), int(m.group(2))) == (insns, ns),
                text.stderr.strip() or text.stdout[:200])

        by_insns = run([path, "--format", "folded"])
        by_ns = run([path, "--format", "folded", "--weight", "ns"])
        t.check(name + " folded insns add up", folded_sum(by_insns.stdout) == insns,
                f"{folded_sum(by_insns.stdout)} != {insns}")
        t.check(name + " folded ns add up", folded_sum(by_ns.stdout) == ns,
                f"{folded_sum(by_ns.stdout)} != {ns}")

        page = open(html, encoding="utf-8").read()
        t.check(name + " html is self-contained", not NETWORK.search(page),
                NETWORK.search(page).group(0) if NETWORK.search(page) else "")
        data = embedded(page)
        t.check(name + " html data parses with the totals",
                data and (data["total_insns"], data["total_ns"]) == (insns, ns)
                and (data["root"]["i"], data["root"]["t"]) == (insns, ns),
                "no data" if not data else f"{data['total_insns']}, {data['total_ns']}")
        t.check(name + " html marks kernel code", data and "kernel" in data["modules"],
                str(data and data["modules"]))
        chromium_check(t, name, html, tmp)
    return totals


def diff(t, tmp, totals):
    html = os.path.join(tmp, "diff.html")
    p = run(["--diff", NOP, FUNCTION, "--format", "json", "--top", "30", "--html", html])
    if p.returncode != 0:
        t.report("diff nop function", p.stderr.strip())
        return
    result = json.loads(p.stdout)
    only_b = [d for d in result["paths"] if d["change"] == "only-in-B"]
    ftrace = [d for d in only_b if re.match(r"^(function_trace_call|ftrace_)", d["path"][-1])]
    t.check("diff: ftrace functions only in B", ftrace,
            f"{len(only_b)} only-in-B paths, none ending in function_trace_call/ftrace_*")
    t.check("diff: no ftrace path in the nop trace",
            not any(re.match(r"^(function_trace_call|ftrace_)", n) for d in result["paths"]
                    if d["a"]["present"] for n in d["path"]))
    # The function that starts the most only-in-B weight is the tracer's entry (ftrace's trampoline,
    # which the lab's kallsyms does not name): ftrace functions run below it.
    top = result["only_in_b_functions"][0] if result["only_in_b_functions"] else None
    starts = [d["path"] for d in only_b if top and d["starts_difference"] and d["path"][-1] == top["function"]]
    below = [d for d in ftrace if any(d["path"][:len(p)] == p for p in starts)]
    t.check("diff: ftrace runs below the largest added function", top and below,
            f"top added function {top and top['function']}: no ftrace function below it")
    t.check("diff: the tracer's code is a large share of B", top and top["share"] > 0.3,
            f"{top and top['share']}")
    t.check("diff: the baseline's paths are kept", result["shared_a"] >= 0.5 and result["warning"] is None,
            f"A shared {result['shared_a']:.3f}, warning {result['warning']}")
    if NOP in totals and FUNCTION in totals:
        t.check("diff: totals equal the single runs",
                (result["a"]["total_insns"], result["a"]["total_ns"]) == totals[NOP] and
                (result["b"]["total_insns"], result["b"]["total_ns"]) == totals[FUNCTION])
    text = run(["--diff", NOP, FUNCTION, "--top", "5"])
    t.check("diff: text table", text.returncode == 0 and "largest differences" in text.stdout and
            len([line for line in text.stdout.splitlines()
                 if re.match(r"^(only-in-[AB]|changed)\s", line)]) == 5, text.stdout[-400:])
    page = open(html, encoding="utf-8").read()
    t.check("diff html is self-contained", not NETWORK.search(page))
    data = embedded(page)
    t.check("diff html data: both trees", data and data["mode"] == "diff" and
            (data["a"]["total_insns"], data["b"]["total_insns"]) ==
            (result["a"]["total_insns"], result["b"]["total_insns"]))
    chromium_check(t, "diff", html, tmp)


def bad_input(t, tmp):
    if os.path.exists(OTHER_PROGRAM):
        p = run(["--diff", NOP, OTHER_PROGRAM])
        m = re.search(r"share only ([\d.]+)% of A's and ([\d.]+)% of B's", p.stderr)
        t.check("different programs: warning with the shared fractions",
                p.returncode == 0 and m and float(m.group(1)) < 20 and float(m.group(2)) < 20,
                p.stderr.strip())
    else:
        t.skip("different programs", OTHER_PROGRAM + " missing")
    p = run([NOP, "--symbol", "no_such_function_anywhere"])
    t.check("unknown symbol: exit 1, one line", p.returncode == 1 and
            len(p.stderr.strip().splitlines()) == 1 and "never entered" in p.stderr, p.stderr)
    p = run([NOP, "--interval", "0x7fffffff0..0x7ffffffff"])
    t.check("empty interval: exit 1, one line", p.returncode == 1 and
            len(p.stderr.strip().splitlines()) == 1 and "no executed instructions" in p.stderr, p.stderr)
    p = run([NOP, "--interval", "10..x"])
    t.check("malformed interval: exit 2", p.returncode == 2 and "FROM..TO" in p.stderr, p.stderr)
    unreadable = os.path.join(tmp, "missing.ptar")
    p = run([unreadable])
    t.check("unreadable file: exit 1 naming it", p.returncode == 1 and unreadable in p.stderr and
            len(p.stderr.strip().splitlines()) == 1, p.stderr)
    p = run([])
    t.check("no input: usage error", p.returncode == 2, p.stderr)


def main():
    t = Tally()
    if not (os.path.exists(NOP) and os.path.exists(FUNCTION)):
        print("SKIP: traces/lab/syscalls-{nop,function}.ptar missing")
        sys.exit(77)
    with tempfile.TemporaryDirectory() as tmp:
        totals = single(t, tmp)
        diff(t, tmp, totals)
        bad_input(t, tmp)
    t.finish()


if __name__ == "__main__":
    main()
