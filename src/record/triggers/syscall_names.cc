#include "src/record/triggers/syscall_names.h"

#include <utility>

namespace ptprof::record::triggers {

namespace {
// x86-64 numbers (arch/x86/entry/syscalls/syscall_64.tbl).
constexpr std::pair<std::string_view, uint64_t> kNames[] = {
    {"read", 0}, {"write", 1}, {"open", 2}, {"close", 3}, {"stat", 4}, {"fstat", 5},
    {"poll", 7}, {"lseek", 8}, {"mmap", 9}, {"mprotect", 10}, {"munmap", 11}, {"brk", 12},
    {"rt_sigaction", 13}, {"rt_sigprocmask", 14}, {"rt_sigreturn", 15}, {"ioctl", 16},
    {"pread64", 17}, {"pwrite64", 18}, {"readv", 19}, {"writev", 20}, {"access", 21},
    {"pipe", 22}, {"select", 23}, {"sched_yield", 24}, {"madvise", 28}, {"dup", 32},
    {"dup2", 33}, {"pause", 34}, {"nanosleep", 35}, {"getitimer", 36}, {"alarm", 37},
    {"setitimer", 38}, {"getpid", 39}, {"sendfile", 40}, {"socket", 41}, {"connect", 42},
    {"accept", 43}, {"sendto", 44}, {"recvfrom", 45}, {"sendmsg", 46}, {"recvmsg", 47},
    {"clone", 56}, {"fork", 57}, {"vfork", 58}, {"execve", 59}, {"exit", 60}, {"wait4", 61},
    {"kill", 62}, {"uname", 63}, {"fcntl", 72}, {"flock", 73}, {"fsync", 74},
    {"fdatasync", 75}, {"getcwd", 79}, {"chdir", 80}, {"rename", 82}, {"mkdir", 83},
    {"rmdir", 84}, {"unlink", 87}, {"readlink", 89}, {"gettimeofday", 96}, {"getuid", 102},
    {"getppid", 110}, {"gettid", 186}, {"futex", 202}, {"epoll_wait", 232},
    {"clock_gettime", 228}, {"clock_nanosleep", 230}, {"exit_group", 231}, {"tgkill", 234},
    {"openat", 257}, {"newfstatat", 262}, {"ppoll", 271}, {"epoll_pwait", 281},
    {"pipe2", 293}, {"prlimit64", 302}, {"getrandom", 318}, {"io_uring_enter", 426},
    {"clone3", 435}};
}  // namespace

std::optional<uint64_t> SyscallNumberOf(std::string_view name) {
  for (const auto& [n, number] : kNames)
    if (name == n) return number;
  if (name.empty() || name.size() > 4 || name.find_first_not_of("0123456789") != std::string_view::npos)
    return std::nullopt;
  uint64_t number = 0;
  for (char c : name) number = number * 10 + static_cast<uint64_t>(c - '0');
  return number;
}

std::string_view SyscallNameOf(uint64_t number) {
  for (const auto& [n, value] : kNames)
    if (value == number) return n;
  return {};
}

}  // namespace ptprof::record::triggers
