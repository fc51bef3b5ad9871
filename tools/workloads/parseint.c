// Sweep workload ParseInt: random 32-bit numbers printed in hexadecimal and parsed back with
// strtoul (libc formatting and parsing: many short loops and calls).
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint32_t NextRandom(void) {  // xorshift64*: deterministic, seeded above
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return (uint32_t)((rng_state * 0x2545f4914f6cdd1dull) >> 32);
}

int main(void) {
  char text[16];
  uint64_t checksum = 0;
  for (int i = 0; i < 20000; ++i) {
    uint32_t value = NextRandom();
    snprintf(text, sizeof text, "%x", value);
    uint32_t parsed = (uint32_t)strtoul(text, NULL, 16);
    if (parsed != value) {
      fprintf(stderr, "parseint: %s parsed as %x\n", text, parsed);
      return 1;
    }
    checksum += parsed;
  }
  printf("parseint %llu\n", (unsigned long long)checksum);
  return 0;
}
