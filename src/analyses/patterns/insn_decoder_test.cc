#include "src/analyses/patterns/insn_decoder.h"

#include <catch2/catch.hpp>

using namespace ptprof;
using namespace ptprof::patterns;

namespace {
InsnText Decode(std::initializer_list<uint8_t> bytes, ExecMode mode, uint64_t ip = 0x1000) {
  InsnDecoder decoder;
  std::vector<uint8_t> v(bytes);
  auto text = decoder.Decode(ip, v.data(), v.size(), mode);
  REQUIRE(text);
  return *text;
}
}  // namespace

TEST_CASE("x86 instructions decode with Zydis into mnemonic, operands and length") {
  InsnText cli = Decode({0xfa}, ExecMode::k64Bit);
  CHECK(cli.mnemonic == "cli");
  CHECK(cli.length == 1);
  CHECK(Decode({0x9c}, ExecMode::k64Bit).mnemonic == "pushfq");
  InsnText pop = Decode({0x58}, ExecMode::k64Bit);
  CHECK(pop.mnemonic == "pop");
  REQUIRE(pop.operands.size() == 1);
  CHECK(pop.operands[0].text == "rax");
  CHECK(pop.operands[0].kind == OperandKind::kReg64);
  InsnText pause = Decode({0xf3, 0x90}, ExecMode::k64Bit);
  CHECK(pause.mnemonic == "pause");
  CHECK(pause.length == 2);
  CHECK(pause.bytes[0] == 0xf3);
  CHECK(Decode({0x0f, 0xae, 0xe8}, ExecMode::k64Bit).mnemonic == "lfence");
  CHECK(Decode({0xfa}, ExecMode::k64Bit, 0xffffffff81000000ull).kernel);
}

TEST_CASE("AArch64 msr daifset/daifclr/daif decode with capstone") {
  InsnText off = Decode({0xdf, 0x42, 0x03, 0xd5}, ExecMode::kA64);  // msr daifset, #2
  CHECK(off.mnemonic == "msr");
  REQUIRE(off.operands.size() == 2);
  CHECK(off.operands[0].text == "daifset");
  CHECK(off.operands[1].value == 2u);
  CHECK(off.length == 4);
  InsnText on = Decode({0xff, 0x42, 0x03, 0xd5}, ExecMode::kA64);  // msr daifclr, #2
  CHECK(on.operands[0].text == "daifclr");
  InsnText restore = Decode({0x20, 0x42, 0x1b, 0xd5}, ExecMode::kA64);  // msr daif, x0
  REQUIRE(restore.operands.size() == 2);
  CHECK(restore.operands[0].text == "daif");
  CHECK(restore.operands[1].kind == OperandKind::kReg64);
}

TEST_CASE("AArch32 and Thumb cpsid/cpsie decode with capstone") {
  InsnText a32 = Decode({0x80, 0x00, 0x0c, 0xf1}, ExecMode::kA32);  // cpsid i
  CHECK(a32.mnemonic == "cpsid");
  REQUIRE(a32.operands.size() == 1);
  CHECK(a32.operands[0].text == "i");
  InsnText t32 = Decode({0x62, 0xb6}, ExecMode::kT32);  // cpsie i
  CHECK(t32.mnemonic == "cpsie");
  CHECK(t32.length == 2);
}

TEST_CASE("undecodable bytes and unknown modes fail") {
  InsnDecoder decoder;
  uint8_t bad[] = {0x0f, 0xff};
  CHECK_FALSE(decoder.Decode(0, bad, 1, ExecMode::k64Bit));
  CHECK_FALSE(decoder.Decode(0, bad, 2, ExecMode::kUnknown));
}
