// A workload that crashes: a null pointer store after some work.
#include <stdio.h>
static int depth(int n) { return n ? 1 + depth(n - 1) : 0; }
int main(void) {
  printf("%d\n", depth(50));
  fflush(stdout);
  volatile int* null = 0;
  *null = depth(3);
  return 0;
}
