#include "src/analyses/syscalls/user_syscall_number.h"

#include <catch2/catch.hpp>

namespace ptprof::syscalls {
namespace {

std::optional<uint32_t> NumberOf(std::vector<uint8_t> code) {
  X86Decoder decoder;
  const uint64_t first = 0x1000;
  const uint64_t syscall_ip = first + code.size();
  code.push_back(0x0f);
  code.push_back(0x05);
  return SyscallNumberInCode(decoder, code.data(), code.size(), first, syscall_ip);
}

TEST_CASE("an immediate load of eax before the syscall gives the number") {
  CHECK(NumberOf({0xb8, 0x27, 0x00, 0x00, 0x00}) == 39u);                    // mov eax, 39
  CHECK(NumberOf({0x48, 0xc7, 0xc0, 0x09, 0x00, 0x00, 0x00}) == 9u);        // mov rax, 9
  CHECK(NumberOf({0x31, 0xc0}) == 0u);                                        // xor eax, eax
  // mov eax, 39; mov edi, 1 (does not touch rax)
  CHECK(NumberOf({0xb8, 0x27, 0x00, 0x00, 0x00, 0xbf, 0x01, 0x00, 0x00, 0x00}) == 39u);
}

TEST_CASE("anything else touching rax after the load makes the number unknown") {
  CHECK_FALSE(NumberOf({0x48, 0x89, 0xf8}));                           // mov rax, rdi
  CHECK_FALSE(NumberOf({0xb8, 0x27, 0x00, 0x00, 0x00, 0x48, 0x89, 0xf8}));  // then mov rax, rdi
  CHECK_FALSE(NumberOf({0xb8, 0x27, 0x00, 0x00, 0x00, 0x48, 0x98}));   // then cdqe
  CHECK_FALSE(NumberOf({0xbf, 0x01, 0x00, 0x00, 0x00}));               // no load at all
  CHECK_FALSE(NumberOf({}));
}

}  // namespace
}  // namespace ptprof::syscalls
