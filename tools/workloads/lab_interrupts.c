// Kernel-lab workload (tools/lab, docs/lab.md): interrupt-heavy. A 1 ms interval timer delivers
// SIGALRM while the program spins and touches fresh pages, so the trace holds timer interrupts,
// page faults (exceptions) and signal deliveries, each an asynchronous transfer.
// Usage: lab_interrupts [ITERATIONS] [PAGES]  (default 3000000 iterations, 256 pages)
// Built statically (gcc -static) at 0x10000000, away from busybox's 0x400000.
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/time.h>

static volatile long alarms;

static void OnAlarm(int signo) {
  (void)signo;
  ++alarms;
}

int main(int argc, char** argv) {
  const long iterations = argc > 1 ? strtol(argv[1], NULL, 10) : 3000000;
  const long pages = argc > 2 ? strtol(argv[2], NULL, 10) : 256;
  signal(SIGALRM, OnAlarm);
  struct itimerval every_ms = {{0, 1000}, {0, 1000}};
  setitimer(ITIMER_REAL, &every_ms, NULL);
  char* memory = mmap(NULL, (size_t)pages * 4096, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) return 1;
  volatile unsigned long sum = 0;
  for (long i = 0; i < iterations; ++i) {
    sum += (unsigned long)i * 7;
    if (i % (iterations / pages + 1) == 0) memory[(i / (iterations / pages + 1)) * 4096] = 1;
  }
  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &off, NULL);
  printf("lab_interrupts: %ld iterations, %ld pages touched, %ld alarms\n", iterations, pages,
         alarms);
  return 0;
}
