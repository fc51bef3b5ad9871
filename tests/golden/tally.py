"""Counting and printing results, shared by the golden test scripts.

Each case prints one line (`ok`, `FAIL`, `SKIP`); the script ends with the plain summary line
`N passed, N failed, N skipped` and exits non-zero when anything failed.
"""
import sys


class Tally:
    def __init__(self):
        self.passed = self.failed = self.skipped = 0

    def report(self, name, problem):
        """Records a case: `problem` is None (or empty) when it passed, else what went wrong."""
        if problem:
            self.failed += 1
            print(f"FAIL  {name}: {problem}")
        else:
            self.passed += 1
            print(f"ok    {name}")

    def same_run(self, name, one, other):
        """Records whether two runs (returncode, stdout, stderr) of a command agree: the same exit
        status and the same output; `other`'s stderr says what went wrong when only it failed."""
        if other[0] != one[0]:
            self.report(name, f"exit {one[0]} on one thread, {other[0]} in parts: "
                              f"{other[2].strip()[:200]}")
        elif other[1] != one[1]:
            self.report(name, "the reports differ")
        else:
            self.report(name, None)

    def check(self, name, ok, detail=""):
        self.report(name, None if ok else (detail or "failed"))

    def skip(self, name, why):
        self.skipped += 1
        print(f"SKIP  {name}: {why}")

    def finish(self):
        print(f"{self.passed} passed, {self.failed} failed, {self.skipped} skipped")
        sys.exit(1 if self.failed else 0)
