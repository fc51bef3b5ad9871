// DescribeInstruction / EvaluateBranch on hand-assembled instructions and fake register contexts.
#include "src/record/swbt/branch_desc.h"

#include <cstring>
#include <map>
#include <vector>

#include <catch2/catch.hpp>

namespace ptprof::swbt {
namespace {

BranchDesc Describe(std::vector<uint8_t> bytes, uint64_t address) {
  ZydisDecoder decoder;
  ZydisDecoderInit(&decoder, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
  ZydisDecodedInstruction insn;
  ZydisDecodedOperand operands[ZYDIS_MAX_OPERAND_COUNT];
  REQUIRE(ZYAN_SUCCESS(ZydisDecoderDecodeFull(&decoder, bytes.data(), bytes.size(), &insn, operands)));
  return DescribeInstruction(insn, operands, address);
}

// Memory of 8-byte words by address; reads elsewhere fail.
struct FakeMemory {
  std::map<uint64_t, uint64_t> words;
  static size_t Read(void* self, uint64_t address, void* out, size_t size) {
    auto& m = static_cast<FakeMemory*>(self)->words;
    auto it = m.find(address);
    if (it == m.end() || size != 8) return 0;
    std::memcpy(out, &it->second, 8);
    return 8;
  }
};

constexpr uint64_t kZF = 1 << 6, kSF = 1 << 7, kOF = 1 << 11, kCF = 1;

TEST_CASE("swbt: a conditional jump is taken by the flags of the context") {
  const BranchDesc je = Describe({0x74, 0x10}, 0x1000);  // je 0x1012
  CHECK(je.kind == BranchKind::kCondJump);
  CHECK(je.target == 0x1012);
  CHECK(!je.IsStatic());
  FakeMemory memory;
  RegisterFile regs;
  regs.rflags = kZF;
  auto taken = EvaluateBranch(je, regs, FakeMemory::Read, &memory);
  CHECK(taken.ok);
  CHECK(taken.taken);
  CHECK(taken.next == 0x1012);
  regs.rflags = 0;
  auto fall = EvaluateBranch(je, regs, FakeMemory::Read, &memory);
  CHECK(!fall.taken);
  CHECK(fall.next == 0x1002);

  const BranchDesc jl = Describe({0x0f, 0x8c, 0x00, 0x01, 0x00, 0x00}, 0x2000);  // jl rel32
  CHECK(jl.target == 0x2106);
  regs.rflags = kSF;
  CHECK(EvaluateBranch(jl, regs, FakeMemory::Read, &memory).taken);
  regs.rflags = kSF | kOF;
  CHECK(!EvaluateBranch(jl, regs, FakeMemory::Read, &memory).taken);
  const BranchDesc jbe = Describe({0x76, 0xfe}, 0x3000);  // jbe to itself
  regs.rflags = kCF;
  CHECK(EvaluateBranch(jbe, regs, FakeMemory::Read, &memory).next == 0x3000);
}

TEST_CASE("swbt: loop and jrcxz count in rcx before the decrement") {
  const BranchDesc loop = Describe({0xe2, 0xfe}, 0x1000);  // loop 0x1000
  CHECK(loop.condition == Condition::kLoop);
  FakeMemory memory;
  RegisterFile regs;
  regs.gpr[1] = 1;  // decremented to 0: falls through
  CHECK(!EvaluateBranch(loop, regs, FakeMemory::Read, &memory).taken);
  regs.gpr[1] = 2;
  CHECK(EvaluateBranch(loop, regs, FakeMemory::Read, &memory).taken);
  const BranchDesc jrcxz = Describe({0xe3, 0x05}, 0x1000);
  CHECK(jrcxz.condition == Condition::kRcxz);
  regs.gpr[1] = 0;
  CHECK(EvaluateBranch(jrcxz, regs, FakeMemory::Read, &memory).next == 0x1007);
}

TEST_CASE("swbt: direct jumps and calls are static; indirect ones read registers and memory") {
  const BranchDesc call = Describe({0xe8, 0x00, 0x01, 0x00, 0x00}, 0x1000);
  CHECK(call.kind == BranchKind::kDirectCall);
  CHECK(call.IsStatic());
  CHECK(call.target == 0x1105);
  const BranchDesc jmp = Describe({0xeb, 0xfe}, 0x1000);
  CHECK(jmp.kind == BranchKind::kDirectJump);
  CHECK(jmp.target == 0x1000);

  FakeMemory memory;
  RegisterFile regs;
  const BranchDesc call_rax = Describe({0xff, 0xd0}, 0x1000);  // call rax
  CHECK(call_rax.kind == BranchKind::kIndirectCall);
  regs.gpr[0] = 0x7777;
  auto out = EvaluateBranch(call_rax, regs, FakeMemory::Read, &memory);
  CHECK(out.ok);
  CHECK(out.next == 0x7777);

  // jmp qword ptr [rip+0x100]: the slot is at the next instruction + 0x100.
  const BranchDesc plt = Describe({0xff, 0x25, 0x00, 0x01, 0x00, 0x00}, 0x4000);
  CHECK(plt.kind == BranchKind::kIndirectJump);
  CHECK(plt.mem);
  CHECK(plt.base == kRip);
  CHECK(!EvaluateBranch(plt, regs, FakeMemory::Read, &memory).ok);  // unreadable: bad target
  memory.words[0x4106] = 0x9999;
  CHECK(EvaluateBranch(plt, regs, FakeMemory::Read, &memory).next == 0x9999);

  // call qword ptr [rax + rbx*8 + 0x10]
  const BranchDesc table = Describe({0xff, 0x54, 0xd8, 0x10}, 0x5000);
  CHECK(table.kind == BranchKind::kIndirectCall);
  regs.gpr[0] = 0x10000;
  regs.gpr[3] = 3;
  memory.words[0x10000 + 24 + 0x10] = 0xabc;
  CHECK(EvaluateBranch(table, regs, FakeMemory::Read, &memory).next == 0xabc);
}

TEST_CASE("swbt: returns read the stack; system and far transfers end a burst") {
  FakeMemory memory;
  RegisterFile regs;
  regs.gpr[kRsp] = 0x8000;
  memory.words[0x8000] = 0x1234;
  const BranchDesc ret = Describe({0xc3}, 0x1000);
  CHECK(ret.kind == BranchKind::kReturn);
  CHECK(EvaluateBranch(ret, regs, FakeMemory::Read, &memory).next == 0x1234);
  const BranchDesc ret8 = Describe({0xc2, 0x08, 0x00}, 0x1000);
  CHECK(ret8.kind == BranchKind::kReturn);
  CHECK(ret8.disp == 8);
  CHECK(Describe({0x0f, 0x05}, 0).kind == BranchKind::kSyscall);
  CHECK(Describe({0xcd, 0x80}, 0).kind == BranchKind::kSyscall);
  CHECK(Describe({0x0f, 0x0b}, 0).kind == BranchKind::kUnsupported);        // ud2
  CHECK(Describe({0x64, 0xff, 0x20}, 0).kind == BranchKind::kUnsupported);  // jmp fs:[rax]
  CHECK(Describe({0x48, 0xcf}, 0).kind == BranchKind::kUnsupported);        // iretq
  CHECK(Describe({0x48, 0x89, 0xe5}, 0).kind == BranchKind::kNone);         // mov rbp, rsp
}

}  // namespace
}  // namespace ptprof::swbt
