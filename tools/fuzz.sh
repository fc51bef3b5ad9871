#!/usr/bin/env bash
# Builds the fuzz targets with clang's libFuzzer and AddressSanitizer in build-fuzz/ and runs one
# target for a while, growing its corpus in tests/fuzz/corpus/<target>/ (new inputs are merged in
# minimised form; review and commit them).
# Usage: tools/fuzz.sh TARGET [SECONDS]     e.g. tools/fuzz.sh packets 300
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:?usage: tools/fuzz.sh TARGET [SECONDS]}
seconds=${2:-120}
dir=build-fuzz
if [ ! -f "$dir/build.ninja" ]; then
  CC=clang CXX=clang++ CXXFLAGS="-fsanitize=fuzzer-no-link" CFLAGS="-fsanitize=fuzzer-no-link" \
    meson setup "$dir" -Dfuzzing=true -Db_sanitize=address,undefined -Db_lundef=false \
    -Dbuildtype=debugoptimized >/dev/null
fi
ninja -C "$dir" "tests/fuzz/fuzz_$target"
corpus=tests/fuzz/corpus/$target
# Leaks inside libraries ptprof uses, not its own (see the file).
export LSAN_OPTIONS="suppressions=$PWD/tests/fuzz/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$dir/tests/fuzz/fuzz_$target" -max_total_time="$seconds" -max_len=4096 -rss_limit_mb=2048 \
  "$work" "$corpus" || { echo "fuzz.sh: the fuzzer found a crash (see crash-* here)"; exit 1; }
"$dir/tests/fuzz/fuzz_$target" -merge=1 "$corpus" "$work" >/dev/null 2>&1
echo "fuzz.sh: corpus $corpus now has $(ls "$corpus" | wc -l) inputs"
