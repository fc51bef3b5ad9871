#include "src/analyses/patterns/insn_text.h"

#include <catch2/catch.hpp>

using namespace ptprof;
using namespace ptprof::patterns;

TEST_CASE("disassembly splits into mnemonic and classified operands") {
  InsnText t = ParseInsnText("mov qword ptr [rsp+0x8], rax");
  CHECK(t.mnemonic == "mov");
  REQUIRE(t.operands.size() == 2);
  CHECK(t.operands[0].kind == OperandKind::kMem);
  CHECK(t.operands[0].text == "qwordptr[rsp+0x8]");
  CHECK(t.operands[1].kind == OperandKind::kReg64);

  InsnText rep = ParseInsnText("rep stosb byte ptr [rdi], al");
  CHECK(rep.mnemonic == "stosb");
  REQUIRE(rep.operands.size() == 2);
  CHECK(rep.operands[1].kind == OperandKind::kReg8);

  InsnText cli = ParseInsnText("cli ");
  CHECK(cli.mnemonic == "cli");
  CHECK(cli.operands.empty());
}

TEST_CASE("Arm operands: immediates by value, commas inside brackets do not split") {
  InsnText msr = ParseInsnText("msr daifset, #2");
  CHECK(msr.mnemonic == "msr");
  REQUIRE(msr.operands.size() == 2);
  CHECK(msr.operands[0].text == "daifset");
  CHECK(msr.operands[1].kind == OperandKind::kImm);
  CHECK(msr.operands[1].value == 2u);

  InsnText ldr = ParseInsnText("ldr x0, [x1, #8]");
  REQUIRE(ldr.operands.size() == 2);
  CHECK(ldr.operands[0].kind == OperandKind::kReg64);
  CHECK(ldr.operands[1].kind == OperandKind::kMem);

  CHECK(NormaliseOperand("v3.16b").kind == OperandKind::kXmm);
  CHECK(NormaliseOperand("w7").kind == OperandKind::kReg32);
  CHECK(NormaliseOperand("xmm15").kind == OperandKind::kXmm);
  CHECK(NormaliseOperand("ymm2").kind == OperandKind::kYmm);
  CHECK(NormaliseOperand("st0").kind == OperandKind::kX87);
  CHECK(NormaliseOperand("r12d").kind == OperandKind::kReg32);
}

TEST_CASE("numbers parse in every spelling the disassemblers use") {
  CHECK(ParseNumber("#2") == 2u);
  CHECK(ParseNumber("0x1f") == 0x1fu);
  CHECK(ParseNumber("#0xF") == 15u);
  CHECK(ParseNumber("-1") == UINT64_MAX);
  CHECK_FALSE(ParseNumber("rax"));
  CHECK_FALSE(ParseNumber("#"));
}

TEST_CASE("kernel addresses: upper half in 64-bit modes, above 3 GiB in 32-bit ones") {
  CHECK(IsKernelAddress(0xffffffff81000000ull, ExecMode::k64Bit));
  CHECK_FALSE(IsKernelAddress(0x401000, ExecMode::k64Bit));
  CHECK(IsKernelAddress(0xffff800010000000ull, ExecMode::kA64));
  CHECK(IsKernelAddress(0xc0008000ull, ExecMode::kA32));
  CHECK_FALSE(IsKernelAddress(0x8000, ExecMode::kT32));
}
