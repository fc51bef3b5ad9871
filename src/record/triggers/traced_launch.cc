#include "src/record/triggers/traced_launch.h"

#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "sideband/demangle.h"
#include "sideband/elf_image.h"

namespace ptprof::record::triggers {

Result<pid_t> LaunchStoppedAtExec(const LaunchSpec& spec) {
  if (spec.argv.empty()) return Fail("no command given (-- CMD ARGS)");
  const pid_t child = fork();
  if (child < 0) return Fail(std::string("fork failed: ") + std::strerror(errno));
  if (child == 0) {
    if (ptrace(PTRACE_TRACEME, 0, nullptr, nullptr) != 0) _exit(126);
    for (const auto& [name, value] : spec.env) setenv(name.c_str(), value.c_str(), 1);
    std::vector<char*> argv;
    for (const auto& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    std::fprintf(stderr, "ptprof: record: %s: cannot run it: %s\n", argv[0], std::strerror(errno));
    _exit(127);
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0)
    if (errno != EINTR) return Fail(std::string("waitpid failed: ") + std::strerror(errno));
  if (WIFSTOPPED(status) && WSTOPSIG(status) == SIGTRAP) return child;
  if (WIFEXITED(status))
    return Fail(fmt::format("{}: cannot run it (exit status {})", spec.argv[0], WEXITSTATUS(status)));
  kill(child, SIGKILL);
  waitpid(child, &status, 0);
  return Fail(spec.argv[0] + ": did not stop after execve");
}

Status ResumeLaunched(pid_t pid) {
  if (ptrace(PTRACE_DETACH, pid, nullptr, nullptr) != 0)
    return Fail(fmt::format("pid {}: PTRACE_DETACH: {}", pid, std::strerror(errno)));
  return {};
}

Status ResolveAddressTriggers(pid_t pid, TriggerEngine& engine) {
  const auto& triggers = engine.policy().triggers;
  bool any = false;
  for (const TriggerSpec& t : triggers) any = any || (t.kind == TriggerKind::kAddress && t.address == 0);
  if (!any) return {};
  char exe[4096] = {};
  const std::string link = fmt::format("/proc/{}/exe", pid);
  const ssize_t n = readlink(link.c_str(), exe, sizeof exe - 1);
  if (n <= 0) return Fail(link + ": " + std::strerror(errno));
  // The executable's first mapping (file offset 0) is where its lowest PT_LOAD lies.
  std::ifstream maps(fmt::format("/proc/{}/maps", pid));
  std::string line;
  uint64_t base = 0;
  while (std::getline(maps, line)) {
    std::istringstream in(line);
    std::string range, perms, offset, dev, inode, path;
    in >> range >> perms >> offset >> dev >> inode >> path;
    if (path != exe || std::strtoull(offset.c_str(), nullptr, 16) != 0) continue;
    base = std::strtoull(range.c_str(), nullptr, 16);
    break;
  }
  if (base == 0) return Fail(fmt::format("/proc/{}/maps: {} is not mapped", pid, exe));
  auto image = LoadElfImage(exe, base);
  if (!image) return tl::unexpected(image.error());
  for (size_t i = 0; i < triggers.size(); ++i) {
    const TriggerSpec& t = triggers[i];
    if (t.kind != TriggerKind::kAddress || t.address != 0) continue;
    uint64_t found = 0;
    for (const Symbol& s : image->symbols)
      if (NamesSymbol(t.symbol, s.name)) {
        found = s.address;
        break;
      }
    if (found == 0)
      return Fail(fmt::format("--snapshot-on '{}': {} has no symbol '{}' (addr= resolves symbols "
                              "of the program's executable; use addr=0xADDR for others)",
                              t.text, exe, t.symbol));
    engine.ResolveAddress(i, found);
  }
  return {};
}

WatchResult WatchUntilExit(pid_t pid, LiveTriggers* live, int poll_ms) {
  auto old_int = std::signal(SIGINT, SIG_IGN);
  WatchResult result;
  int status = 0;
  for (;;) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) break;
    if (live) live->Poll(poll_ms, result.decisions);
    else usleep(static_cast<useconds_t>(poll_ms) * 1000);
  }
  if (live) {
    live->Poll(0, result.decisions, true);  // what arrived until the end
    result.lost = live->lost();
  }
  std::signal(SIGINT, old_int);
  if (WIFEXITED(status)) result.exit_status = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  return result;
}

}  // namespace ptprof::record::triggers
