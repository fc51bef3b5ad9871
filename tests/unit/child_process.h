#pragma once
// RunInChild answers, for a unit test, "what does this code write, and how does it end, in a
// process of its own?": for code that must not run in the test process (a lowered resource
// limit, a fault that ends the process). The body gets a descriptor to write to; what it writes
// comes back with the child's wait status.
#include <sys/wait.h>
#include <unistd.h>

#include <string>

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

}  // namespace ptprof::testing
