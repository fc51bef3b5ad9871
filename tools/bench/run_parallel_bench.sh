#!/usr/bin/env bash
# Parallel-decode benchmark: records (once, cached in BUILD_DIR/bench/parallel/) real programs with
# the emulated PT recorder at 100 M+ instructions each (gzip, xz, sort of a fixed input, a python
# loop, a C compile), then runs parallel_bench on each recording and on the real traces in
# ../shared/testdata: ptprof's block flow on 1 and 2 threads (and the CPU count) beside libipt's
# block decoder driven directly, cold and warm, with ratios, every row checked event for event
# against the one-piece decode on libipt (--verify), and the machine's ceiling for 2 threads (two
# whole decodes at once on threads that share nothing, over one alone). Also `perf script` on the
# recordings exported as perf.data, and `trc_pkt_lister` on a CoreSight snapshot, for scale.
# Prints the load average before and after (the machine is shared: say what it was).
# Usage: tools/bench/run_parallel_bench.sh [BUILD_DIR] [WORKLOAD...]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
only=("${@:2}")
ninja -C "$build" ptprof tools/parallel_bench src/record/qemu/libptprof_qemu.so >/dev/null
cache=$build/bench/parallel
mkdir -p "$cache"
if [ ! -f "$cache/input" ]; then
  python3 -c "
import random; r = random.Random(7)
words = [''.join(r.choice('abcdefghijklmnop') for _ in range(r.randint(2, 9))) for _ in range(2000)]
open('$cache/input', 'w').write('\n'.join(' '.join(r.choice(words) for _ in range(8)) for _ in range(30000)))"
  printf 'int printf(const char *, ...);\nint fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }\nint main(void) { printf("%%d\\n", fib(20)); return 0; }\n' > "$cache/fib.c"
fi

record() {  # record NAME COMMAND...: the recording, made once
  local name=$1; shift
  if [ ${#only[@]} -gt 0 ] && [[ ! " ${only[*]} " == *" $name "* ]]; then return 1; fi
  if [ ! -f "$cache/$name.ptar" ]; then
    echo "recording $name: $*" >&2
    "$build/ptprof" record --backend qemu -o "$cache/$name.ptar" --force -q -- "$@" >/dev/null
  fi
}

echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
jobs=(--jobs 1 --jobs 2)
[ "$(nproc)" -gt 2 ] && jobs+=(--jobs "$(nproc)")

bench() {  # bench INPUT [EXTRA...]
  echo
  "$build/tools/parallel_bench" --repeat 3 --verify "${jobs[@]}" "$@" || echo "(parallel_bench failed on $1)"
}

perf_script() {  # perf_script NAME: perf's own decode of the recording, exported as perf.data
  command -v perf >/dev/null || { echo "perf script: perf is not installed"; return; }
  local out=$cache/$1.perf
  if [ ! -f "$out/perf.data" ]; then
    mkdir -p "$out"
    "$build/ptprof" export --perf-data "$out/perf.data" --images-dir "$out/images" \
      "$cache/$1.ptar" >/dev/null 2>&1 || { echo "perf script: export failed"; return; }
  fi
  local t0 t1 branches
  t0=$(date +%s.%N)
  branches=$(perf script -i "$out/perf.data" --itrace=b -F ip 2>/dev/null | wc -l) || true
  t1=$(date +%s.%N)
  python3 -c "print('perf script --itrace=b -F ip (every branch, counted): %.2f s, %d branches' % ($t1 - $t0, $branches))"
}

run() {
  local name=$1; shift
  record "$name" "$@" || return 0
  bench "$cache/$name.ptar"
  perf_script "$name"
}

run gzip gzip -9 -c "$cache/input"
run xz xz -6 -c "$cache/input"
run sort sort "$cache/input"
run python /usr/bin/python3 -c "s = 0
for i in range(1000000): s += i * i
print(s)"
run cc1 /usr/lib/gcc/x86_64-linux-gnu/12/cc1 -quiet -O2 "$cache/fib.c" -o /dev/null

shared=../shared/testdata
if [ ${#only[@]} -eq 0 ] && [ -d "$shared" ]; then
  for trace in "$shared/perf_data_converter/src/quipper/testdata/perf.data.intel_pt-4.14"; do
    [ -f "$trace" ] && bench "$trace"
  done
  snapshot=$shared/opencsd/snapshots/juno-uname-002
  if command -v trc_pkt_lister >/dev/null && [ -d "$snapshot" ]; then
    t0=$(date +%s.%N)
    (cd "$snapshot" && trc_pkt_lister -ss_dir . -decode -logfilename /dev/null -no_time_print >/dev/null 2>&1) || true
    t1=$(date +%s.%N)
    python3 -c "print('\ntrc_pkt_lister -decode (juno-uname-002, CoreSight): %.3f s' % ($t1 - $t0))"
  fi
fi
echo
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
