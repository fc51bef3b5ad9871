#include "src/record/ptrace_stepper.h"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

namespace ptprof::record {

namespace {

[[noreturn]] void ExecChild(const StepperOptions& options) {
  if (options.quiet_child) {
    int null_fd = open("/dev/null", O_WRONLY);
    if (null_fd >= 0) {
      dup2(null_fd, 1);
      dup2(null_fd, 2);
    }
  }
  ptrace(PTRACE_TRACEME, 0, nullptr, nullptr);
  std::vector<char*> args;
  for (const auto& a : options.argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  execvp(args[0], args.data());
  _exit(127);
}

// Reads up to 16 code bytes at `ip`; fewer when the mapping ends sooner.
size_t ReadCode(pid_t pid, uint64_t ip, uint8_t* out) {
  iovec local{out, 16};
  iovec remote{reinterpret_cast<void*>(ip), 16};
  ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
  if (n > 0) return static_cast<size_t>(n);
  // Slow path near the end of a mapping: word by word.
  size_t got = 0;
  while (got < 16) {
    errno = 0;
    long word = ptrace(PTRACE_PEEKTEXT, pid, reinterpret_cast<void*>(ip + got), nullptr);
    if (errno != 0) break;
    size_t take = std::min<size_t>(sizeof word, 16 - got);
    std::memcpy(out + got, &word, take);
    got += take;
  }
  return got;
}

}  // namespace

Result<StepperResult> RunSingleStepped(const StepperOptions& options, const OnInstruction& on_insn) {
  if (options.argv.empty()) return Fail("ptrace stepper: no program given");
  pid_t pid = fork();
  if (pid < 0) return Fail(std::string("ptrace stepper: fork failed: ") + std::strerror(errno));
  if (pid == 0) ExecChild(options);

  StepperResult result;
  int status = 0;
  // The child stops with SIGTRAP right after execve.
  if (waitpid(pid, &status, 0) < 0 || !WIFSTOPPED(status)) {
    return Fail("ptrace stepper: " + options.argv[0] + ": the program did not start under ptrace");
  }
  ptrace(PTRACE_SETOPTIONS, pid, nullptr, reinterpret_cast<void*>(PTRACE_O_EXITKILL));
  int pending_signal = 0;
  for (;;) {
    user_regs_struct regs{};
    if (ptrace(PTRACE_GETREGS, pid, nullptr, &regs) != 0) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return Fail(std::string("ptrace stepper: cannot read registers: ") + std::strerror(errno));
    }
    if (result.steps >= options.max_steps) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      result.killed = true;
      return result;
    }
    uint8_t code[16];
    size_t size = ReadCode(pid, regs.rip, code);
    if (auto s = on_insn(regs.rip, code, size); !s) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return tl::unexpected(s.error());
    }
    ++result.steps;
    if (ptrace(PTRACE_SINGLESTEP, pid, nullptr, reinterpret_cast<void*>(
                                                    static_cast<long>(pending_signal))) != 0) {
      return Fail(std::string("ptrace stepper: single-step failed: ") + std::strerror(errno));
    }
    pending_signal = 0;
    if (waitpid(pid, &status, 0) < 0)
      return Fail(std::string("ptrace stepper: wait failed: ") + std::strerror(errno));
    if (WIFEXITED(status)) {
      result.exit_status = WEXITSTATUS(status);
      return result;
    }
    if (WIFSIGNALED(status)) {
      result.signal = WTERMSIG(status);
      return result;
    }
    if (WIFSTOPPED(status) && WSTOPSIG(status) != SIGTRAP) {
      // A real signal for the program: deliver it with the next step (its handler, if any, then
      // shows up as an unexpected next instruction: an asynchronous transfer).
      pending_signal = WSTOPSIG(status);
    }
  }
}

}  // namespace ptprof::record
