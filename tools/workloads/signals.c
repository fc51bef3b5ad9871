// A workload that takes signals: raise() (delivered after a syscall), a timer signal that
// interrupts a busy loop at an arbitrary point, and a SIGSEGV handled with siglongjmp.
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>

static volatile int ticks;
static sigjmp_buf recover;

static void on_usr1(int sig) { (void)sig; ticks += 100; }
static void on_alarm(int sig) { (void)sig; ++ticks; }
static void on_segv(int sig) { (void)sig; siglongjmp(recover, 1); }

int main(void) {
  signal(SIGUSR1, on_usr1);
  raise(SIGUSR1);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm;
  sigaction(SIGALRM, &sa, NULL);
  struct itimerval timer = {{0, 2000}, {0, 2000}};
  setitimer(ITIMER_REAL, &timer, NULL);
  volatile unsigned long spin = 0;
  while (ticks < 103) {
    for (int i = 0; i < 1000; ++i) spin += (unsigned)i & 3 ? 1 : 2;
  }
  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &off, NULL);
  signal(SIGSEGV, on_segv);
  if (sigsetjmp(recover, 1) == 0) {
    volatile int* null = 0;
    *null = 1;
  }
  printf("ticks %d\n", ticks >= 103);
  return 0;
}
