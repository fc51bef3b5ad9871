#pragma once
// SyscallNumberOf answers "which x86-64 syscall number does this name (or number) stand for?" for
// the trigger grammar (`syscall=nanosleep`, `syscall-latency>1ms:read`). A small table of the
// common calls; a plain number is accepted for anything else.
#include <cstdint>
#include <optional>
#include <string_view>

namespace ptprof::record::triggers {

std::optional<uint64_t> SyscallNumberOf(std::string_view name);
// The name of a number in the table, or empty.
std::string_view SyscallNameOf(uint64_t number);

}  // namespace ptprof::record::triggers
