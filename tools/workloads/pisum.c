// Sweep workload PiSum: the series sum of 1/k^2 (k = 1..10000), repeated; a tight floating-point
// loop with one conditional branch per iteration.
#include <stdio.h>

int main(void) {
  volatile double sink = 0;  // keeps every repetition
  double sum = 0;
  for (int repeat = 0; repeat < 300; ++repeat) {
    sum = 0;
    for (int k = 1; k <= 10000; ++k) sum += 1.0 / ((double)k * k);
    sink = sink + sum;
  }
  printf("pisum %.12f %.6f\n", sum, sink);
  return 0;
}
