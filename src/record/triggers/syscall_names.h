#pragma once
// SyscallNumberOf answers "which x86-64 syscall number does this name (or number) stand for?" for
// the trigger grammar (`syscall=nanosleep`, `syscall-latency>1ms:read`), from the kernel's table
// (sideband/syscall_table); a plain number is accepted as is.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ptprof::record::triggers {

std::optional<uint64_t> SyscallNumberOf(std::string_view name);
// The name of a number, or empty.
std::string_view SyscallNameOf(uint64_t number);
// " (did you mean nanosleep?)" for a misspelt name, or empty.
std::string SyscallHint(std::string_view name);

}  // namespace ptprof::record::triggers
