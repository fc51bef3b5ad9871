// Sweep workload RandMatStat: statistics of random matrices (the Julia benchmark's randmatstat):
// for T trials of four 5x5 normal matrices a, b, c, d, with P = [a b c d] and Q = [a b; c d],
// the traces of (P'P)^4 and (Q'Q)^4, and their coefficients of variation.
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#define TRIALS 120
#define MAXN 20

static uint64_t rng_state = 0xa4093822299f31d0ull;
static double NextUniform(void) {  // xorshift64*, deterministic, in (0, 1]
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return ((double)((rng_state * 0x2545f4914f6cdd1dull) >> 11) + 1.0) / 9007199254740992.0;
}
static double NextNormal(void) {  // Box-Muller
  return sqrt(-2.0 * log(NextUniform())) * cos(6.283185307179586 * NextUniform());
}

// out (n x n) = m' m for m (rows x n).
static void Gram(int rows, int n, double m[][MAXN], double out[][MAXN]) {
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double s = 0;
      for (int k = 0; k < rows; ++k) s += m[k][i] * m[k][j];
      out[i][j] = s;
    }
}

// m = m * m (n x n).
static void Square(int n, double m[][MAXN]) {
  double t[MAXN][MAXN];
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double s = 0;
      for (int k = 0; k < n; ++k) s += m[i][k] * m[k][j];
      t[i][j] = s;
    }
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) m[i][j] = t[i][j];
}

static double TraceOfFourthPower(int rows, int n, double m[][MAXN]) {
  double g[MAXN][MAXN];
  Gram(rows, n, m, g);
  Square(n, g);
  Square(n, g);
  double trace = 0;
  for (int i = 0; i < n; ++i) trace += g[i][i];
  return trace;
}

static void Statistics(const double* x, int n, double* mean, double* sd) {
  double s = 0, s2 = 0;
  for (int i = 0; i < n; ++i) s += x[i];
  *mean = s / n;
  for (int i = 0; i < n; ++i) s2 += (x[i] - *mean) * (x[i] - *mean);
  *sd = sqrt(s2 / (n - 1));
}

int main(void) {
  static double v[TRIALS], w[TRIALS];
  for (int t = 0; t < TRIALS; ++t) {
    double blocks[4][5][5];
    for (int m = 0; m < 4; ++m)
      for (int i = 0; i < 5; ++i)
        for (int j = 0; j < 5; ++j) blocks[m][i][j] = NextNormal();
    double p[MAXN][MAXN] = {{0}}, q[MAXN][MAXN] = {{0}};
    for (int m = 0; m < 4; ++m)
      for (int i = 0; i < 5; ++i)
        for (int j = 0; j < 5; ++j) {
          p[i][m * 5 + j] = blocks[m][i][j];                 // P = [a b c d], 5 x 20
          q[(m / 2) * 5 + i][(m % 2) * 5 + j] = blocks[m][i][j];  // Q = [a b; c d], 10 x 10
        }
    v[t] = TraceOfFourthPower(5, 20, p);
    w[t] = TraceOfFourthPower(10, 10, q);
  }
  double mean_v, sd_v, mean_w, sd_w;
  Statistics(v, TRIALS, &mean_v, &sd_v);
  Statistics(w, TRIALS, &mean_w, &sd_w);
  printf("randmatstat %.9f %.9f\n", sd_v / mean_v, sd_w / mean_w);
  return 0;
}
