// The delta-profiling check (tests/golden/delta_markers.py): intervals between two unprivileged
// marker instructions, `pause` (the opener) and `lfence` (the closer), around counted loops of
// known lengths. After the pause of one interval the CPU executes exactly
//   mov n, %rcx ; n x (dec %rcx ; jnz) ; lfence  =  2n + 2 instructions up to the lfence,
// so `ptprof delta` with the pair pause,lfence must find these instruction-count deltas:
//   n = 10: 5 intervals of 22, n = 100: 3 of 202, n = 1000: 2 of 2002, n = 5000: 1 of 10002,
// plus one interval with a second pause inside it (a nested opener), see nested() below.
// The sequences are in asm so that the compiler cannot change their instruction counts, and the
// program runs without libc (built -nostdlib -static) so that its trace is small and holds no
// other pause or lfence.

static void interval(long n) {
  __asm__ volatile(
      "pause\n\t"
      "mov %0, %%rcx\n"
      "1:\n\t"
      "dec %%rcx\n\t"
      "jnz 1b\n\t"
      "lfence\n\t"
      :
      : "r"(n)
      : "rcx", "cc", "memory");
}

// pause ; mov ; 50 x (dec ; jnz) ; pause ; lfence: the second pause is a nested opener, and the
// interval is measured from the first: 1 + 100 + 1 + 1 = 103 instructions after it.
static void nested(void) {
  __asm__ volatile(
      "pause\n\t"
      "mov $50, %%rcx\n"
      "1:\n\t"
      "dec %%rcx\n\t"
      "jnz 1b\n\t"
      "pause\n\t"
      "lfence\n\t"
      :
      :
      : "rcx", "cc", "memory");
}

static const struct {
  long n;
  int times;
} kLoops[] = {{10, 5}, {100, 3}, {1000, 2}, {5000, 1}};

void _start(void) {
  for (unsigned i = 0; i < sizeof kLoops / sizeof kLoops[0]; ++i)
    for (int k = 0; k < kLoops[i].times; ++k) interval(kLoops[i].n);
  nested();
  __asm__ volatile("mov $60, %%eax\n\txor %%edi, %%edi\n\tsyscall" ::: "rax", "rdi", "memory");
  __builtin_unreachable();
}
