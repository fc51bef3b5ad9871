// ScanRun over hand-assembled code: the next branch, the stack pointer's movement up to it, and
// code that cannot be read.
#include "src/record/swbt/decode_ahead.h"

#include <cstring>
#include <vector>

#include <catch2/catch.hpp>

namespace ptprof::swbt {
namespace {

struct FakeCode {
  uint64_t base;
  std::vector<uint8_t> bytes;
  static size_t Read(void* self, uint64_t address, void* out, size_t size) {
    auto* code = static_cast<FakeCode*>(self);
    if (address < code->base || address >= code->base + code->bytes.size()) return 0;
    const size_t n = std::min<size_t>(size, code->base + code->bytes.size() - address);
    std::memcpy(out, code->bytes.data() + (address - code->base), n);
    return n;
  }
};

Run Scan(FakeCode& code, uint64_t start) {
  ZydisDecoder decoder;
  ZydisDecoderInit(&decoder, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
  return ScanRun(decoder, start, FakeCode::Read, &code);
}

TEST_CASE("swbt: the run ends at the first control transfer, with the stack movement") {
  FakeCode code{0x1000, {0x55,                    // push rbp
                         0x48, 0x83, 0xec, 0x20,  // sub rsp, 0x20
                         0x48, 0x85, 0xc9,        // test rcx, rcx
                         0x5b,                    // pop rbx
                         0x74, 0x10}};            // je +0x10
  const Run run = Scan(code, 0x1000);
  REQUIRE(run.end == RunEnd::kBranch);
  CHECK(run.branch.address == 0x1009);
  CHECK(run.branch.kind == BranchKind::kCondJump);
  CHECK(run.branch.target == 0x101b);
  CHECK(run.rsp_known);
  CHECK(run.rsp_delta == -8 - 0x20 + 8);
  CHECK(run.insns == 5);
  const Run tail = Scan(code, 0x1005);  // from the middle: only test, pop, je
  CHECK(tail.rsp_delta == 8);
  CHECK(tail.insns == 3);
}

TEST_CASE("swbt: rsp written otherwise is unknown; unreadable code is a decode failure") {
  FakeCode code{0x2000, {0x48, 0x89, 0xec,  // mov rsp, rbp
                         0xc3}};            // ret
  const Run run = Scan(code, 0x2000);
  REQUIRE(run.end == RunEnd::kBranch);
  CHECK(run.branch.kind == BranchKind::kReturn);
  CHECK(!run.rsp_known);
  FakeCode cut{0x3000, {0x90, 0x90, 0x48}};  // nop, nop, half an instruction, then nothing
  CHECK(Scan(cut, 0x3000).end == RunEnd::kDecodeFailure);
  CHECK(Scan(cut, 0x9000).end == RunEnd::kDecodeFailure);
  FakeCode nops{0x4000, std::vector<uint8_t>(kMaxRunInsns + 10, 0x90)};
  CHECK(Scan(nops, 0x4000).end == RunEnd::kTooLong);
}

TEST_CASE("swbt: the decode cache finds runs by start address") {
  static DecodeCache cache;  // large: not on the test's stack
  cache.Clear();
  CHECK(cache.Find(0x1000) == nullptr);
  Run run;
  run.start = 0x1000;
  run.insns = 7;
  cache.Put(run);
  REQUIRE(cache.Find(0x1000) != nullptr);
  CHECK(cache.Find(0x1000)->insns == 7);
  CHECK(cache.Find(0x2000) == nullptr);
  Run again = run;
  again.insns = 9;
  cache.Put(again);
  CHECK(cache.Find(0x1000)->insns == 9);
}

}  // namespace
}  // namespace ptprof::swbt
