// Sweep workload Omega: the loop of Epsilon plus one always-taken conditional branch per
// iteration (the paper's listing 2: mov $42,%r8; mov $42,%r9; cmp; je): one more TNT bit per
// iteration, the upper limit for conditional branches.
#include <stdio.h>

#define ITERATIONS 2500000  // the same count as epsilon.c

int main(void) {
  unsigned long left = ITERATIONS;
  unsigned long taken = 0;
  __asm__ volatile(
      "1:\n\t"
      "mov $42, %%r8\n\t"
      "mov $42, %%r9\n\t"
      "cmp %%r8, %%r9\n\t"
      "je 2f\n\t"
      "nop\n\t"
      "2:\n\t"
      "inc %1\n\t"
      "dec %0\n\t"
      "jnz 1b\n\t"
      : "+r"(left), "+r"(taken)
      :
      : "r8", "r9", "cc");
  printf("omega %lu %lu\n", left, taken);
  return 0;
}
