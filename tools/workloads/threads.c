// A multi-threaded workload for the qemu recorder: four threads each sum a range with recursion.
#include <pthread.h>
#include <stdio.h>

static long sum_to(long n) { return n == 0 ? 0 : n + sum_to(n - 1); }

static void* worker(void* arg) {
  long n = (long)arg;
  long total = 0;
  for (int i = 0; i < 50; ++i) total += sum_to(n + i);
  return (void*)total;
}

int main(void) {
  pthread_t threads[4];
  for (long i = 0; i < 4; ++i) pthread_create(&threads[i], NULL, worker, (void*)(100 + i));
  long total = 0;
  for (int i = 0; i < 4; ++i) {
    void* result;
    pthread_join(threads[i], &result);
    total += (long)result;
  }
  printf("total %ld\n", total);
  return 0;
}
