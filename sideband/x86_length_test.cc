#include "sideband/x86_length.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "sideband/x86_insn.h"

using namespace ptprof;

namespace {

std::vector<uint8_t> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

// Compares PlainInsnOf with Zydis on bytes[0, size): where it gives a length, Zydis must
// decode the same length, an instruction that does not change the flow of control, with the
// mnemonic Zydis gave every other instruction of the same key. Counts what was given and what
// disagreed (the first few disagreements are reported).
struct Comparison {
  const X86Decoder& zydis;
  size_t given = 0;
  size_t wrong = 0;
  std::vector<const char*> mnemonic_of_key = std::vector<const char*>(kPlainInsnKeys);

  void Check(const uint8_t* bytes, size_t size) {
    const PlainInsn plain = PlainInsnOf(bytes, size);
    const uint8_t length = plain.length;
    if (length == 0) return;
    ++given;
    auto insn = zydis.Decode(bytes, size, ExecMode::k64Bit);
    if (insn && insn->length == length && insn->kind == X86Kind::kOther &&
        !insn->has_branch_disp) {
      if (plain.key >= kPlainInsnKeys) {
        if (++wrong <= 20) FAIL_CHECK("key " << plain.key << " out of range");
        return;
      }
      const char*& known = mnemonic_of_key[plain.key];
      if (!known) known = insn->mnemonic;
      if (std::string(known) == insn->mnemonic) return;
      if (++wrong <= 20)
        FAIL_CHECK("key " << plain.key << " was " << known << ", now " << insn->mnemonic);
      return;
    }
    if (++wrong > 20) return;
    std::string hex;
    for (size_t i = 0; i < std::min<size_t>(size, 15); ++i) {
      char byte[4];
      std::snprintf(byte, sizeof byte, "%02x ", bytes[i]);
      hex += byte;
    }
    FAIL_CHECK("bytes " << hex << "-> " << int{length} << ", Zydis: "
                        << (insn ? std::to_string(insn->length) + " " + X86KindName(insn->kind)
                                 : std::string("cannot decode")));
  }
};

}  // namespace

TEST_CASE("plain instruction lengths are Zydis's at every byte offset of real binaries",
          "[x86_length]") {
  X86Decoder zydis;
  for (const char* path : {"/proc/self/exe", "/lib/x86_64-linux-gnu/libc.so.6",
                           "/lib/x86_64-linux-gnu/libstdc++.so.6"}) {
    const std::vector<uint8_t> file = ReadFile(path);
    if (file.empty()) continue;
    INFO(path);
    Comparison compare{zydis};
    for (size_t at = 0; at < file.size() && compare.wrong <= 20; ++at)
      compare.Check(file.data() + at, std::min<size_t>(16, file.size() - at));
    CHECK(compare.wrong == 0);
    CHECK(compare.given > file.size() / 4);
  }
}

TEST_CASE("plain instruction lengths are Zydis's on random bytes and prefix mixes",
          "[x86_length]") {
  X86Decoder zydis;
  std::mt19937_64 random(20261128);
  const uint8_t prefixes[] = {0x66, 0x67, 0xf2, 0xf3, 0xf0, 0x2e, 0x3e, 0x26,
                              0x36, 0x64, 0x65, 0x40, 0x48, 0x41, 0x4c, 0x4f};
  Comparison compare{zydis};
  for (int n = 0; n < 1'000'000 && compare.wrong <= 20; ++n) {
    uint8_t bytes[16];
    for (uint8_t& b : bytes) b = static_cast<uint8_t>(random());
    // Half of them start with a few prefixes, a quarter of those with 0x0f.
    if (n % 2 == 0) {
      const int count = static_cast<int>(random() % 4);
      for (int k = 0; k < count; ++k) bytes[k] = prefixes[random() % std::size(prefixes)];
      if (n % 8 == 0) bytes[count] = 0x0f;
    }
    const size_t size = 1 + random() % 16;
    compare.Check(bytes, size);
  }
  CHECK(compare.wrong == 0);
  CHECK(compare.given > 100'000);
}

TEST_CASE("plain instruction lengths cover the common instructions and leave out the rest",
          "[x86_length]") {
  auto length = [](std::vector<uint8_t> bytes) {
    return int{PlainInsnLength(bytes.data(), bytes.size())};
  };
  CHECK(length({0x48, 0x89, 0xe5}) == 3);                          // mov rbp, rsp
  CHECK(length({0x48, 0x8b, 0x05, 0x00, 0x02, 0x00, 0x00}) == 7);  // mov rax, [rip+0x200]
  CHECK(length({0x8b, 0x44, 0x24, 0x08}) == 4);                    // mov eax, [rsp+8]
  CHECK(length({0x8b, 0x04, 0x25, 1, 2, 3, 4}) == 7);              // mov eax, [0x4030201]
  CHECK(length({0x48, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8}) == 10);       // mov rax, imm64
  CHECK(length({0x66, 0xb8, 1, 2}) == 4);                          // mov ax, imm16
  CHECK(length({0x66, 0x48, 0x81, 0xc0, 1, 2, 3, 4}) == 8);        // add rax, imm32 (REX.W wins)
  CHECK(length({0x66, 0x81, 0xc0, 1, 2}) == 5);                    // add ax, imm16
  CHECK(length({0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00}) == 6);        // nop word [rax+rax]
  CHECK(length({0xf3, 0x0f, 0x1e, 0xfa}) == 4);                    // endbr64
  CHECK(length({0x41, 0x55}) == 2);                                // push r13
  CHECK(length({0x0f, 0xb6, 0xc0}) == 3);                          // movzx eax, al
  CHECK(length({0x48, 0x8d, 0x04, 0x40}) == 4);                    // lea rax, [rax+rax*2]
  // Control flow, system instructions and what Zydis must judge: none.
  for (const std::vector<uint8_t>& other : std::vector<std::vector<uint8_t>>{
           {0xe8, 0, 0, 0, 0},        // call
           {0xc3},                    // ret
           {0xff, 0xd0},              // call rax
           {0xff, 0x25, 0, 0, 0, 0},  // jmp [rip]
           {0x74, 0x02},              // jz
           {0x0f, 0x84, 0, 0, 0, 0},  // jz rel32
           {0x0f, 0x05},              // syscall
           {0xfa},                    // cli
           {0xfb},                    // sti
           {0x0f, 0x22, 0xd8},        // mov cr3, rax
           {0xf3, 0xab},              // rep stosd
           {0xf0, 0x48, 0x0f, 0xb1, 0x0a},  // lock cmpxchg
           {0x48, 0x8d, 0xc0},              // lea with a register operand
           {0xc7, 0xf8, 0, 0, 0, 0},        // xbegin
           {0xc5, 0xf8, 0x77},              // vzeroupper
           {0x48, 0x89},                    // cut short
       })
    CHECK(length(other) == 0);
}
