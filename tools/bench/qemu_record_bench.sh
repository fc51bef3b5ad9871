#!/usr/bin/env bash
# Recording overhead of `ptprof record --backend qemu` against plain qemu-x86_64 and native runs,
# and the encoder's throughput, on deterministic workloads. Prints one line per workload with the
# times (best of 3, wall clock), the ratios (plugin and record against native and against plain
# qemu) and the encoder's M instructions/s (per second of its own CPU time: reading the stream
# and encoding, while the emulator runs and after; from `record`'s summary line).
# Usage: tools/bench/qemu_record_bench.sh [BUILD_DIR [WORKLOAD...]]   (gzip, recursion, threads)
set -euo pipefail
build=${1:-build}
only=("${@:2}")
ptprof=$build/ptprof
plugin_so=$build/src/record/qemu/libptprof_qemu.so
command -v qemu-x86_64 >/dev/null || { echo "SKIP: qemu-x86_64 not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A fixed 4 MB input for gzip: the same bytes every run.
python3 -c "
import random; r = random.Random(42)
words = [''.join(r.choice('abcdefghij') for _ in range(r.randint(2, 9))) for _ in range(500)]
open('$tmp/input', 'w').write(' '.join(r.choice(words) for _ in range(700000)))"

best() {  # best wall-clock seconds of 3 runs of "$@"
  local best=999999
  for _ in 1 2 3; do
    local t0 t1
    t0=$(date +%s.%N); "$@" >/dev/null 2>&1 || true; t1=$(date +%s.%N)
    best=$(python3 -c "print(min($best, $t1 - $t0))")
  done
  echo "$best"
}

run() {
  local name=$1; shift
  if [ ${#only[@]} -gt 0 ] && [[ ! " ${only[*]} " == *" $name "* ]]; then return; fi
  set -- "$(command -v "$1")" "${@:2}"  # qemu-x86_64 does not search PATH
  local native qemu plugin record
  native=$(best "$@")
  qemu=$(best qemu-x86_64 "$@")
  plugin=$(best qemu-x86_64 -plugin "$plugin_so,out=$tmp/stream" "$@")
  rm -f "$tmp/out.ptar"
  "$ptprof" record -o "$tmp/out.ptar" --force -- "$@" >/dev/null 2>"$tmp/summary"
  record=$(best "$ptprof" record -o "$tmp/out.ptar" --force -q -- "$@")
  local insns bytes enc
  insns=$(grep -o '[0-9]* instructions' "$tmp/summary" | cut -d' ' -f1)
  bytes=$(grep -o '[0-9]* bytes of PT' "$tmp/summary" | cut -d' ' -f1)
  enc=$(grep -o 'encoding [0-9.]* s CPU ([0-9.]* M insn/s)' "$tmp/summary")
  python3 - "$name" "$native" "$qemu" "$plugin" "$record" "$insns" "$bytes" "$enc" <<'PY'
import sys
name, native, qemu, plugin, record, insns, pt, enc = sys.argv[1:]
native, qemu, plugin, record, insns, pt = map(float, (native, qemu, plugin, record, insns, pt))
print(f"{name:10s} {insns/1e6:8.1f} M insns | native {native:6.3f}s | qemu {qemu:6.3f}s ({qemu/native:5.1f}x)"
      f" | qemu+plugin {plugin:6.3f}s ({plugin/native:5.1f}x, {plugin/qemu:4.2f}x qemu)"
      f" | ptprof record {record:6.3f}s ({record/native:5.1f}x, {record/qemu:4.2f}x qemu, "
      f"{insns/record/1e6:5.1f} M insn/s end to end) | encoder {enc} | {pt/insns:.3f} PT bytes/insn")
PY
}

run gzip gzip -6 -c "$tmp/input"
run recursion "$build/src/record/workload_recursion" 30
run threads "$build/src/record/workload_threads"
