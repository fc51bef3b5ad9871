// Kernel-lab workload (tools/lab, docs/lab.md): a fixed number of each of the syscalls whose kernel
// paths the lab traces: getpid, mmap+munmap, openat+close, read of a file. Raw syscall(2) calls, so
// that the C library adds nothing (no caching, no wrappers that pick other syscalls).
// Usage: lab_syscalls [ROUNDS] [FILE] [hang]  (default 20 rounds reading /init; `hang`: wait
// forever at the end, a guest that never powers off, for the recorder's timeout)
// Built statically (gcc -static) at 0x10000000, away from busybox's 0x400000.
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char** argv) {
  const long rounds = argc > 1 ? strtol(argv[1], NULL, 10) : 20;
  const char* path = argc > 2 ? argv[2] : "/init";
  char buffer[256];
  long pids = 0, maps = 0, opens = 0, reads = 0;
  for (long i = 0; i < rounds; ++i) {
    pids += syscall(SYS_getpid) > 0;
    void* p = (void*)syscall(SYS_mmap, NULL, 4096, PROT_READ | PROT_WRITE,
                             MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p != MAP_FAILED) maps += syscall(SYS_munmap, p, 4096) == 0;
    long fd = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY);
    if (fd >= 0) {
      opens += 1;
      reads += syscall(SYS_read, fd, buffer, sizeof buffer) > 0;
      syscall(SYS_close, fd);
    }
  }
  if (argc > 3 && argv[3][0] == 'h') pause();
  printf("lab_syscalls: %ld rounds: getpid %ld, mmap+munmap %ld, openat+close %ld, read %ld\n",
         rounds, pids, maps, opens, reads);
  return pids == rounds && maps == rounds && opens == rounds && reads == rounds ? 0 : 1;
}
