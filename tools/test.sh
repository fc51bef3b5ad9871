#!/usr/bin/env bash
# Sets up (tools/setup.sh), builds, and runs every test: unit tests, golden conformance tests and
# fuzz-corpus replays. Ends with one line "N passed, N failed, N skipped".
set -uo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build}
tools/setup.sh "$build_dir" || exit 1
meson test -C "$build_dir" --print-errorlogs --num-processes 2
status=$?
log="$build_dir/meson-logs/testlog.json"
if [ -f "$log" ]; then
  python3 - "$log" <<'PY'
import json, sys
counts = {"OK": 0, "FAIL": 0, "SKIP": 0}
for line in open(sys.argv[1]):
    r = json.loads(line)["result"]
    key = {"EXPECTEDFAIL": "OK", "UNEXPECTEDPASS": "FAIL", "TIMEOUT": "FAIL", "ERROR": "FAIL"}.get(r, r)
    counts[key] = counts.get(key, 0) + 1
print(f"{counts['OK']} passed, {counts['FAIL']} failed, {counts['SKIP']} skipped")
PY
fi
exit $status
