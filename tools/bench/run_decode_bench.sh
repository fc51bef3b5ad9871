#!/usr/bin/env bash
# Decode-throughput benchmark: records (once, cached in build/bench/) the sample program built
# with a large loop count, then runs decode_bench on that trace, which times ptprof's block and
# instruction flow and packet listing beside libipt's own block decoder on the same input.
# Usage: tools/bench/run_decode_bench.sh [BUILD_DIR] [OUTER_COUNT]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
outer=${2:-1000}
ninja -C "$build" tools/decode_bench tools/make_sample_trace >/dev/null
mkdir -p "$build/bench"
program="$build/bench/sample-$outer"
trace="$program.pt"
if [ ! -f "$trace" ]; then
  g++ -DOUTER_COUNT="$outer" -nostdlib -static -no-pie -o "$program" tools/sample_trace/sample.S
  echo "recording $program with ptrace (about 30 s per million instructions)..." >&2
  "$build/tools/make_sample_trace" -o "$trace" --psb-period 4096 -- "$program"
fi
"$build/tools/decode_bench" --repeat 5 "$trace" --elf "$program"
