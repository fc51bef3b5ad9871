#!/usr/bin/env python3
"""Bad input to `ptprof delta` (docs/delta.md): each gives one clear line and a non-zero status.

Usage errors (exit 2): an unknown pattern name, a definition that does not parse (with the column
of the error), a malformed --pair or --pattern, --bins 0. Bad input (exit 1): a pair that never
matches in the trace (a message saying which pattern never matched and how much was decoded,
not an empty histogram), an --interval that does not exist, a missing file.
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from tally import Tally  # noqa: E402

PTPROF = os.environ["PTPROF"]
ROOT = os.environ["SOURCE_ROOT"]
TRACE = os.path.join(ROOT, "traces", "delta", "markers.ptar")

t = Tally()


def case(name, args, status, message, command="delta"):
    out = subprocess.run([PTPROF, command, *args], capture_output=True, text=True)
    lines = out.stderr.strip().splitlines()
    problem = None
    if out.returncode != status:
        problem = f"exit {out.returncode}, expected {status}: {out.stderr.strip()}"
    elif len(lines) != 1 or message not in lines[0]:
        problem = f"stderr {out.stderr.strip()!r} does not say {message!r}"
    elif out.stdout:
        problem = f"printed a result: {out.stdout[:80]!r}"
    t.report(name, problem)


case("unknown pattern name", ["--pair", "superCL,superSTI", TRACE], 2,
     "ptprof: delta: unknown pattern name 'superCL' (built-ins and definitions: a32IrqOff, ")
case("unknown name suggests --pattern", ["--pair", "superCLI,nothere", TRACE], 2,
     "define one with --pattern nothere=DEFINITION)")
case("parse error with its column", ["--pattern", "x=pushf ; pop r64 ;{4 cli", "--pair", "x,superSTI", TRACE],
     2, "ptprof: delta: pattern x: column 21: expected '}' to close ;{N}")
case("empty alternative", ["--pattern", "x=cli || sti", "--pair", "x,x", TRACE], 2,
     "pattern x: column 6: expected an instruction (a mnemonic or bytes:...)")
case("bad byte pattern", ["--pattern", "x=bytes: 0f 0g", "--pair", "x,x", TRACE], 2,
     "pattern x: column 11: expected a byte as two hex digits or ??")
case("--pattern without =", ["--pattern", "cli", "--pair", "superCLI,superSTI", TRACE], 2,
     "--pattern 'cli': expected NAME=DEFINITION")
case("--pair with one name", ["--pair", "superCLI", TRACE], 2,
     "--pair 'superCLI': expected two pattern names as OPEN,CLOSE")
case("--bins 0", ["--pair", "superCLI,superSTI", "--bins", "0", TRACE], 2,
     "--bins must be at least 1")
case("a pair that never matches", ["--pair", "superCLI,superSTI", TRACE], 1,
     "neither superCLI nor superSTI matched (14914 instructions decoded): no intervals")
case("an opener that never matches", ["--pattern", "c=lfence", "--pair", "superCLI,c", TRACE], 1,
     "superCLI never matched (14914 instructions decoded, c 12 times): no intervals")
case("a closer that never matches", ["--pattern", "o=pause", "--pair", "o,superSTI", TRACE], 1,
     "superSTI never matched (14914 instructions decoded, o 13 times): no intervals")
case("both match but no interval closes", ["--pattern", "o=syscall", "--pattern", "c=pause",
     "--pair", "o,c", TRACE], 1,
     "no interval closed (14914 instructions decoded; 0 dropped at gaps, 1 open at the end, "
     "13 closers without an opener)")
case("missing input", ["--pair", "superCLI,superSTI", "/nonexistent.ptar"], 1,
     "/nonexistent.ptar: cannot open")
case("decode --interval beyond the last", ["--interval", "99", "--pattern", "o=pause", "--pattern",
     "c=lfence", "--pair", "o,c", TRACE], 1, "no interval 99 (12 intervals of o,c)", "decode")
case("decode --interval without --pair", ["--interval", "1", TRACE], 2,
     "--interval needs the --pair", "decode")
case("decode --around garbage", ["--around", "soon", TRACE], 2,
     "--around 'soon': expected a trace offset", "decode")
t.finish()
