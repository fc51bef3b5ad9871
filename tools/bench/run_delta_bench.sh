#!/usr/bin/env bash
# Delta-profiling throughput beside plain decoding of the same trace (tools/bench/delta_bench.cc).
# Usage: tools/bench/run_delta_bench.sh [BUILD_DIR] [INPUT]   (default: traces/qemu/gzip.ptar)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
input=${2:-traces/qemu/gzip.ptar}
ninja -C "$build" tools/delta_bench >/dev/null
"$build/tools/delta_bench" --repeat 3 "$input"
