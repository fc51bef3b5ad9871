#!/usr/bin/env bash
# Records the kernel lab's archives in traces/lab/ (docs/lab.md) with the lab kernel
# (tools/lab/fetch_kernel.sh) and the lab workloads built in BUILD_DIR:
#   syscalls-nop.ptar       lab_syscalls 10 (10 x getpid, mmap+munmap, openat+close, read), ftrace nop
#   syscalls-function.ptar  the same with the function tracer
#   interrupts.ptar         lab_interrupts 200000 64 (1 ms itimer, page faults), ftrace nop
# and their summaries (traces/lab/expected/*.txt: the recorder's lab_info).
# Usage: tools/lab/make_traces.sh [BUILD_DIR]   (default build)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
ptprof=$build/ptprof
workloads=$build/src/record/qemu_system
out=traces/lab
mkdir -p "$out/expected"
ninja -C "$build" ptprof src/record/qemu/libptprof_qemu_system.so \
  src/record/qemu_system/lab_syscalls src/record/qemu_system/lab_interrupts >&2
record() {
  local name=$1; shift
  /usr/bin/time -f "$name: %e s wall" "$ptprof" record --backend qemu-system --force \
    -o "$out/$name.ptar" "$@"
  zstd -dc "$out/$name.ptar" | tr -d '\r' | grep -aE '^(kernel|uname|tracer|workload_pid|workload_exit|smp|plugin_count_[a-z_]+|flow_count_[a-z_]+|insns|kernel_insns|interrupts|faults|unresolved_async|code_conflicts) ' \
    | sed "s|^kernel .*/|kernel |; s|^workload .*/|workload |" > "$out/expected/$name.txt"
}
record syscalls-nop --guest-tracer nop -- "$workloads/lab_syscalls" 10
record syscalls-function --guest-tracer function -- "$workloads/lab_syscalls" 10
# Cycle-accurate timing (CYC after every packet, MTC every 2^0 ART periods): the syscalls' latency
# in ns, for ptprof syscalls/impact (impact_lab_timed); about 0.6-0.8 bytes of PT per instruction.
record syscalls-nop-cyc --guest-tracer nop --cyc-threshold 1 --mtc-period 0 -- "$workloads/lab_syscalls" 10
record syscalls-function-cyc --guest-tracer function --cyc-threshold 1 --mtc-period 0 -- "$workloads/lab_syscalls" 10
record interrupts --guest-tracer nop -- "$workloads/lab_interrupts" 200000 64
ls -l "$out"/*.ptar >&2
