#pragma once
// RunInChild answers, for a unit test, "what does this code write, and how does it end, in a
// process of its own?": for code that must not run in the test process (a lowered resource
// limit, a fault that ends the process). The body gets a descriptor to write to; what it writes
// comes back with the child's wait status.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace ptprof::testing {

struct ChildRun {
  std::string output;  // what the body wrote to its descriptor
  int status = -1;     // as waitpid gives it; -1: the child could not be started
  bool Exited(int code) const { return status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == code; }
};

// Runs body(fd) in a forked child, which then exits 0 (unless the body ended it otherwise).
template <typename Body>
ChildRun RunInChild(Body body) {
  ChildRun run;
  int fds[2];
  if (pipe(fds) != 0) return run;
  const pid_t child = fork();
  if (child < 0) {
    close(fds[0]);
    close(fds[1]);
    return run;
  }
  if (child == 0) {
    close(fds[0]);
    body(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  char buffer[512];
  for (ssize_t n; (n = read(fds[0], buffer, sizeof buffer)) > 0;) run.output.append(buffer, static_cast<size_t>(n));
  close(fds[0]);
  if (waitpid(child, &run.status, 0) != child) run.status = -1;
  return run;
}

// In a child: limits the address space to what the process has mapped now and `more` bytes.
inline void LimitAddressSpace(size_t more) {
  long pages = 0;
  if (FILE* statm = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(statm, "%ld", &pages) != 1) pages = 0;
    std::fclose(statm);
  }
  const rlim_t limit = static_cast<rlim_t>(pages) * static_cast<rlim_t>(sysconf(_SC_PAGESIZE)) +
                       static_cast<rlim_t>(more);
  const rlimit as{limit, limit};
  setrlimit(RLIMIT_AS, &as);
}

// What RunWithoutThreads' child writes when a thread started all the same.
inline constexpr const char* kThreadStarted = "a thread started";

// RunInChild, in a child whose address space has room for buffers of a few MiB but not for
// another thread's stack (8 MiB): for code that must do without the threads it would start. The
// C library keeps the stacks of threads that ended for new ones, and the child inherits them:
// threads that wait take those first. `spare` of them then end, so that exactly that many
// threads can start again. When a thread could still start after 64, the body does not run and
// the output is kThreadStarted.
template <typename Body>
ChildRun RunWithoutThreads(Body body, size_t spare = 0) {
  return RunInChild([&](int out) {
    LimitAddressSpace(size_t{4} << 20);
    int wait[2], release[2];
    if (pipe(wait) != 0 || pipe(release) != 0) _exit(2);
    std::vector<std::thread> waiting;
    bool full = false;
    for (size_t i = 0; i < 64 && !full; ++i) {
      try {
        // The first `spare` wait on `release`, the others on `wait`.
        waiting.emplace_back([fd = i < spare ? release[0] : wait[0]] {
          char byte;
          if (read(fd, &byte, 1) < 0) return;
        });
      } catch (const std::system_error&) {
        full = true;
      }
    }
    if (full && waiting.size() > spare) {
      close(release[1]);
      for (size_t i = 0; i < spare; ++i) waiting[i].join();
      body(out);
    }
    close(wait[1]);  // the waiting threads read the end of the pipe and end
    if (!full || waiting.size() <= spare) close(release[1]);
    for (std::thread& thread : waiting)
      if (thread.joinable()) thread.join();
    if (full && waiting.size() > spare) return;
    const std::string said = kThreadStarted;
    if (write(out, said.data(), said.size()) < 0) _exit(2);
  });
}

}  // namespace ptprof::testing
