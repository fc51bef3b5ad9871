// A workload for syscall-latency triggers: ROUNDS rounds of FAST fast calls (getpid and
// nanosleep(0)) followed by one deliberately slow nanosleep(SLOW_MS ms), then FAST more fast
// calls. Each kind of call has its own `syscall` instruction, labelled (fast_getpid_insn,
// fast_nanosleep_insn, slow_nanosleep_insn) and printed at the end, so a test can tell from a
// decoded trace which calls it holds.
//   slow_syscall [ROUNDS=4] [FAST=200] [SLOW_MS=5]
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

extern const char fast_getpid_insn[], fast_nanosleep_insn[], slow_nanosleep_insn[];

__attribute__((noinline, noclone)) long fast_getpid(void) {
  long ret;
  __asm__ volatile(".globl fast_getpid_insn\nfast_getpid_insn: syscall"
                   : "=a"(ret) : "a"(39L) : "rcx", "r11", "memory");
  return ret;
}

__attribute__((noinline, noclone)) long fast_nanosleep(void) {
  struct timespec zero = {0, 0};
  long ret;
  __asm__ volatile(".globl fast_nanosleep_insn\nfast_nanosleep_insn: syscall"
                   : "=a"(ret) : "a"(35L), "D"(&zero), "S"(0L) : "rcx", "r11", "memory");
  return ret;
}

__attribute__((noinline, noclone)) long slow_nanosleep(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  long ret;
  __asm__ volatile(".globl slow_nanosleep_insn\nslow_nanosleep_insn: syscall"
                   : "=a"(ret) : "a"(35L), "D"(&ts), "S"(0L) : "rcx", "r11", "memory");
  return ret;
}

static void fast_calls(int n) {
  for (int i = 0; i < n; ++i) {
    fast_getpid();
    fast_nanosleep();
  }
}

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? atoi(argv[1]) : 4;
  const int fast = argc > 2 ? atoi(argv[2]) : 200;
  const long slow_ms = argc > 3 ? atol(argv[3]) : 5;
  for (int r = 0; r < rounds; ++r) {
    fast_calls(fast);
    slow_nanosleep(slow_ms);
  }
  fast_calls(fast);
  printf("slow_syscall: %d slow nanosleep(%ld ms), %d fast getpid+nanosleep(0) pairs\n", rounds,
         slow_ms, fast * (rounds + 1));
  printf("insns: fast_getpid %p fast_nanosleep %p slow_nanosleep %p\n", (void*)fast_getpid_insn,
         (void*)fast_nanosleep_insn, (void*)slow_nanosleep_insn);
  return 0;
}
