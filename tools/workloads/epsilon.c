// Sweep workload Epsilon: the empty loop (only its own back edge, one conditional branch per
// iteration). Omega is the same loop plus one conditional branch; the difference between the two
// is the cost of one conditional branch per iteration (docs/sweep.md). The loop is written in
// assembly so that both have exactly the same shape at any optimisation level.
#include <stdio.h>

#define ITERATIONS 2500000  // docs/sweep.md and the sweep's workload table use this count

int main(void) {
  unsigned long left = ITERATIONS;
  __asm__ volatile(
      "1:\n\t"
      "dec %0\n\t"
      "jnz 1b\n\t"
      : "+r"(left)
      :
      : "cc");
  printf("epsilon %lu %d\n", left, ITERATIONS);
  return 0;
}
