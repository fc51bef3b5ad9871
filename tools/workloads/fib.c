// Sweep workload Fib: the doubly recursive Fibonacci function (calls, returns and one conditional
// branch per call).
#include <stdio.h>

__attribute__((noinline)) static long fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

int main(void) {
  long checksum = fib(27);
  printf("fib %ld\n", checksum);
  return 0;
}
