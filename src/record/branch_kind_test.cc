#include "src/record/branch_kind.h"

#include <vector>

#include <catch2/catch.hpp>

using namespace ptprof;
using ptprof::pt::BranchKind;

namespace {
BranchKind KindOf(std::vector<uint8_t> bytes) {
  X86Decoder decoder;
  auto insn = decoder.Decode(bytes.data(), bytes.size(), ExecMode::k64Bit);
  REQUIRE(insn);
  return record::UserModeBranchKind(*insn);
}
}  // namespace

TEST_CASE("user-mode branch kinds from real instruction bytes") {
  CHECK(KindOf({0xe8, 0x08, 0x00, 0x00, 0x00}) == BranchKind::kDirectCall);   // call rel32
  CHECK(KindOf({0xff, 0xd0}) == BranchKind::kIndirectCall);                   // call rax
  CHECK(KindOf({0xff, 0x14, 0xc1}) == BranchKind::kIndirectCall);             // call [rcx+rax*8]
  CHECK(KindOf({0xeb, 0xfe}) == BranchKind::kDirectJump);                     // jmp $
  CHECK(KindOf({0xff, 0xe0}) == BranchKind::kIndirectJump);                   // jmp rax
  CHECK(KindOf({0x75, 0xf7}) == BranchKind::kCondJump);                       // jnz
  CHECK(KindOf({0xc3}) == BranchKind::kReturn);                               // ret
  CHECK(KindOf({0x0f, 0x05}) == BranchKind::kSyscall);                        // syscall
  CHECK(KindOf({0xcd, 0x80}) == BranchKind::kSyscall);                        // int 0x80
  CHECK(KindOf({0x90}) == BranchKind::kNone);                                 // nop
  CHECK(KindOf({0x48, 0x89, 0xd8}) == BranchKind::kNone);                     // mov rax, rbx
}
