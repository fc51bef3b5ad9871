// Which syscall number did the user code put in eax before its syscall instruction? Read from the
// code of the block that ends with the syscall: the last instruction before it that touches the
// rax register must be an immediate load (mov eax/rax, imm or xor eax, eax) and nothing after it
// may touch rax, not even implicitly; otherwise the number is unknown (never a guess).
#pragma once

#include <cstdint>
#include <optional>

#include "sideband/image_set.h"
#include "sideband/x86_insn.h"

namespace ptprof::syscalls {

// The number in eax at the syscall instruction at `syscall_ip` (x86-64), from the code of
// [block_first_ip, syscall_ip] in `images`; nullopt when the code does not say.
std::optional<uint32_t> UserSyscallNumber(const ImageSet& images, const X86Decoder& decoder,
                                          uint64_t block_first_ip, uint64_t syscall_ip);

// The same for code bytes `code` that start at `first_ip` and hold the syscall at `syscall_ip`.
std::optional<uint32_t> SyscallNumberInCode(const X86Decoder& decoder, const uint8_t* code,
                                            size_t size, uint64_t first_ip, uint64_t syscall_ip);

}  // namespace ptprof::syscalls
