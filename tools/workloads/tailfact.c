// Sweep workload TailFact: factorials (mod 1e9+7) by tail calls through a function pointer, so
// every step is an indirect jump (a TIP packet in Intel PT): the upper limit for indirect branches.
#include <stdint.h>
#include <stdio.h>

typedef uint64_t (*Step)(uint64_t n, uint64_t acc);
static uint64_t fact_step(uint64_t n, uint64_t acc);
// volatile: the compiler cannot turn the tail call into a direct jump or a loop.
static Step volatile next_step = fact_step;

static uint64_t fact_step(uint64_t n, uint64_t acc) {
  if (n <= 1) return acc;
  return next_step(n - 1, acc * n % 1000000007u);  // a tail call: jmp *%rax at -O2
}

int main(void) {
  uint64_t checksum = 0;
  for (uint64_t round = 0; round < 4000; ++round) checksum = checksum * 31 + next_step(200 + round % 50, 1);
  printf("tailfact %016llx\n", (unsigned long long)checksum);
  return 0;
}
