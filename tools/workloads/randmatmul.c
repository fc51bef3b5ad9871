// Sweep workload RandMatMul: C = A x B for random N x N matrices with a blocked (BLAS-style)
// multiply: the inner loop runs over contiguous rows and vectorises, so few branches per flop.
#include <stdint.h>
#include <stdio.h>

#define N 160
#define BLOCK 32

static uint64_t rng_state = 0x452821e638d01377ull;
static double NextRandom(void) {  // xorshift64*, deterministic
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return (double)((rng_state * 0x2545f4914f6cdd1dull) >> 11) / 9007199254740992.0;
}

static double a[N][N], b[N][N], c[N][N];

static void BlockedMultiply(void) {
  for (int ii = 0; ii < N; ii += BLOCK)
    for (int kk = 0; kk < N; kk += BLOCK)
      for (int jj = 0; jj < N; jj += BLOCK)
        for (int i = ii; i < ii + BLOCK; ++i)
          for (int k = kk; k < kk + BLOCK; ++k) {
            const double aik = a[i][k];
            for (int j = jj; j < jj + BLOCK; ++j) c[i][j] += aik * b[k][j];
          }
}

int main(void) {
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < N; ++j) {
      a[i][j] = NextRandom();
      b[i][j] = NextRandom();
    }
  BlockedMultiply();
  double checksum = 0;
  for (int i = 0; i < N; ++i) checksum += c[i][(i * 7) % N];
  printf("randmatmul %.9f\n", checksum);
  return 0;
}
