// Sweep workload Sort: quicksort (Hoare partition, insertion sort for short ranges) of random
// doubles: data-dependent conditional branches.
#include <stdint.h>
#include <stdio.h>

#define COUNT 40000

static uint64_t rng_state = 0x243f6a8885a308d3ull;
static double NextRandom(void) {  // xorshift64*, deterministic
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return (double)((rng_state * 0x2545f4914f6cdd1dull) >> 11) / 9007199254740992.0;
}

static void InsertionSort(double* a, long lo, long hi) {
  for (long i = lo + 1; i <= hi; ++i) {
    double v = a[i];
    long j = i - 1;
    while (j >= lo && a[j] > v) {
      a[j + 1] = a[j];
      --j;
    }
    a[j + 1] = v;
  }
}

static void QuickSort(double* a, long lo, long hi) {
  while (hi - lo > 16) {
    double pivot = a[lo + (hi - lo) / 2];
    long i = lo, j = hi;
    while (i <= j) {
      while (a[i] < pivot) ++i;
      while (a[j] > pivot) --j;
      if (i <= j) {
        double t = a[i];
        a[i] = a[j];
        a[j] = t;
        ++i;
        --j;
      }
    }
    if (j - lo < hi - i) {  // recurse into the smaller part
      QuickSort(a, lo, j);
      lo = i;
    } else {
      QuickSort(a, i, hi);
      hi = j;
    }
  }
  InsertionSort(a, lo, hi);
}

static double values[COUNT];

int main(void) {
  for (int i = 0; i < COUNT; ++i) values[i] = NextRandom();
  QuickSort(values, 0, COUNT - 1);
  double checksum = 0;
  for (int i = 0; i < COUNT; ++i) {
    if (i > 0 && values[i - 1] > values[i]) {
      fprintf(stderr, "sort: not sorted at %d\n", i);
      return 1;
    }
    checksum += values[i] * (i % 7);
  }
  printf("sort %.9f\n", checksum);
  return 0;
}
