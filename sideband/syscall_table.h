// SyscallTable answers "which Linux syscall has this number, and which number has this name?" for
// x86-64 and for AArch64 (the kernel's generic table, asm-generic/unistd.h). The tables are
// generated from the kernel headers by tools/gen_syscall_table.py (syscall_table_x86_64.cc and
// syscall_table_generic.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ptprof {

enum class SyscallArch : uint8_t { kX86_64, kAArch64 };

struct SyscallEntry {
  uint32_t number;
  const char* name;
};

// "getpid" for (kX86_64, 39); nullopt for a number the table does not have.
std::optional<std::string_view> SyscallName(SyscallArch arch, uint32_t number);
// 39 for (kX86_64, "getpid"); nullopt for an unknown name.
std::optional<uint32_t> SyscallNumber(SyscallArch arch, std::string_view name);
// Every entry of the table, by number.
std::vector<SyscallEntry> SyscallEntries(SyscallArch arch);
// Up to `count` names of the table closest to `name` (edit distance, then prefix), best first:
// what an error message offers for a misspelt name.
std::vector<std::string> NearSyscallNames(SyscallArch arch, std::string_view name, size_t count);

}  // namespace ptprof
