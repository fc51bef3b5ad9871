// A deterministic workload for the qemu recorder: recursion, indirect calls through a table,
// a switch (jump table) and libc (printf, qsort with a callback).
#include <stdio.h>
#include <stdlib.h>

static int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
static int twice(int x) { return 2 * x; }
static int square(int x) { return x * x; }
static int negate(int x) { return -x; }
static int (*const ops[])(int) = {twice, square, negate};

static int compare(const void* a, const void* b) {
  return *(const int*)a - *(const int*)b;
}

int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 15;
  long sum = 0;
  for (int i = 0; i < 300; ++i) {
    sum += ops[i % 3](i);
    switch (i % 5) {
      case 0: sum += 1; break;
      case 1: sum ^= 7; break;
      case 2: sum -= 3; break;
      case 3: sum *= 1; break;
      default: sum += i; break;
    }
  }
  int values[64];
  for (int i = 0; i < 64; ++i) values[i] = (i * 37) % 64;
  qsort(values, 64, sizeof values[0], compare);
  printf("fib(%d) = %d, sum = %ld, min = %d\n", n, fib(n), sum, values[0]);
  return 0;
}
