#include "sideband/x86_insn.h"

#include <catch2/catch.hpp>

using namespace ptprof;

namespace {
std::string Fmt(const X86Decoder& d, std::initializer_list<uint8_t> bytes, uint64_t ip = 0x401000,
                ExecMode mode = ExecMode::k64Bit) {
  std::vector<uint8_t> b(bytes);
  auto text = d.Format(b.data(), b.size(), mode, ip);
  REQUIRE(text);
  return *text;
}
X86Insn Dec(const X86Decoder& d, std::initializer_list<uint8_t> bytes,
            ExecMode mode = ExecMode::k64Bit) {
  std::vector<uint8_t> b(bytes);
  auto insn = d.Decode(b.data(), b.size(), mode);
  REQUIRE(insn);
  return *insn;
}
}  // namespace

TEST_CASE("formats like XED does in ptxed's listings") {
  X86Decoder d;
  CHECK(Fmt(d, {0xb8, 0x01, 0x00, 0x00, 0x00}) == "mov eax, 0x1");
  CHECK(Fmt(d, {0x48, 0xc7, 0xc6, 0x00, 0x20, 0x40, 0x00}) == "mov rsi, 0x402000");
  CHECK(Fmt(d, {0xb8, 0x3c, 0x00, 0x00, 0x00}) == "mov eax, 0x3c");
  CHECK(Fmt(d, {0x0f, 0x05}) == "syscall ");
  CHECK(Fmt(d, {0x8b, 0x45, 0xfc}) == "mov eax, dword ptr [rbp-0x4]");
  CHECK(Fmt(d, {0xe8, 0x1b, 0x00, 0x00, 0x00}) == "call 0x401020");
  CHECK(Fmt(d, {0x48, 0x8b, 0x05, 0x00, 0x02, 0x00, 0x00}) == "mov rax, qword ptr [rip+0x200]");
  CHECK(Fmt(d, {0x48, 0x8d, 0x35, 0x5e, 0x2d, 0x00, 0x00}) == "lea rsi, ptr [rip+0x2d5e]");
  CHECK(Fmt(d, {0x74, 0x02}, 0x1001) == "jz 0x1005");
  CHECK(Fmt(d, {0xc3}) == "ret ");
}

TEST_CASE("classifies control flow and finds direct targets") {
  X86Decoder d;
  X86Insn call = Dec(d, {0xe8, 0x1b, 0x00, 0x00, 0x00});
  CHECK(call.kind == X86Kind::kCallNear);
  CHECK(call.length == 5);
  CHECK(call.NextIp(0x401000) == 0x401020);
  CHECK(Dec(d, {0xc3}).kind == X86Kind::kRetNear);
  CHECK(Dec(d, {0xcb}).kind == X86Kind::kRetFar);
  CHECK(Dec(d, {0xeb, 0xfe}).kind == X86Kind::kJumpNear);
  CHECK(Dec(d, {0xeb, 0xfe}).NextIp(0x1000) == 0x1000);
  CHECK(Dec(d, {0xff, 0xe0}).kind == X86Kind::kJumpNear);  // jmp rax
  CHECK_FALSE(Dec(d, {0xff, 0xe0}).has_branch_disp);
  CHECK(Dec(d, {0x74, 0x02}).kind == X86Kind::kCondJump);
  CHECK(Dec(d, {0xe2, 0xfe}).kind == X86Kind::kCondJump);  // loop
  CHECK(Dec(d, {0x0f, 0x05}).kind == X86Kind::kSyscall);
  CHECK(Dec(d, {0x48, 0x0f, 0x07}).kind == X86Kind::kSysret);
  CHECK(Dec(d, {0xcd, 0x80}).kind == X86Kind::kInterrupt);
  CHECK(Dec(d, {0x48, 0xcf}).kind == X86Kind::kIret);
  CHECK(Dec(d, {0x0f, 0x01, 0xc1}).kind == X86Kind::kVmCall);
  CHECK(Dec(d, {0xc7, 0xf8, 0, 0, 0, 0}).kind == X86Kind::kOther);  // xbegin
  CHECK(Dec(d, {0x90}).kind == X86Kind::kOther);
  CHECK(Dec(d, {0xea, 0, 0, 0, 0, 0x10, 0}, ExecMode::k32Bit).kind == X86Kind::kJumpFar);
  CHECK(X86KindToBlockEnd(X86Kind::kSyscall) == BlockEnd::kSyscall);
  CHECK(X86KindToBlockEnd(X86Kind::kCondJump) == BlockEnd::kCondTaken);
}

TEST_CASE("rejects undecodable bytes and unknown modes") {
  X86Decoder d;
  uint8_t bad[] = {0x0f, 0xff};
  CHECK_FALSE(d.Decode(bad, 1, ExecMode::k64Bit));
  uint8_t nop[] = {0x90};
  CHECK_FALSE(d.Decode(nop, 1, ExecMode::kUnknown));
  CHECK_FALSE(d.Decode(nop, 1, ExecMode::kA64));
}
