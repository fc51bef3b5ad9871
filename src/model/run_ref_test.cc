#include "src/model/run_ref.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

using namespace ptprof;

namespace {

RunBlock MakeRunBlock(uint64_t first_ip, uint32_t insns, bool speculative) {
  RunBlock block;
  block.first_ip = first_ip;
  block.span = 0x13;
  block.insns = insns;
  block.last_insn_size = 5;
  block.end = static_cast<uint8_t>(BlockEnd::kCall);
  block.mode = static_cast<uint8_t>(ExecMode::k64Bit);
  block.flags = speculative ? kPackedSpeculative : 0;
  return block;
}

void CheckStamped(const PackedEvent& out, const RunBlock& block, uint64_t tsc, uint64_t offset) {
  CHECK(out.first_ip_or_index == block.first_ip);
  CHECK(out.tsc == tsc);
  CHECK(out.offset == offset);
  CHECK(out.span == block.span);
  CHECK(out.insns == block.insns);
  CHECK(out.last_insn_size == block.last_insn_size);
  CHECK(out.end == block.end);
  CHECK(out.mode == block.mode);
  CHECK(out.flags == block.flags);
  CHECK(out.context == 0);
}

}  // namespace

TEST_CASE("a stamped run block is the packed block with its tsc and offset, context 0",
          "[run_ref]") {
  const RunBlock block = MakeRunBlock(0xffffffff81000010, 0x01020304, true);
  PackedEvent out;
  std::memset(static_cast<void*>(&out), 0xa5, sizeof out);  // what a batch slot held before
  StampRunBlock(block, 0x1122334455667788, 0x99aabbcc, out);
  CheckStamped(out, block, 0x1122334455667788, 0x99aabbcc);
}

TEST_CASE("an expanded run reference stamps its first block at its own offset", "[run_ref]") {
  std::vector<RunBlock> blocks;
  for (uint32_t i = 0; i < 5; ++i)
    blocks.push_back(MakeRunBlock(0x400000 + 32 * i, i + 1, i == 2));
  PackedEvent ref;
  REQUIRE(MakeRunRef(blocks.data(), 5, 15, 777, 1000, 1040, ref));
  CHECK(IsRunRef(ref));
  CHECK(RunRefBlocks(ref) == 5);
  CHECK(RunRefFirstOffset(ref) == 1000);
  std::vector<PackedEvent> out(5);
  for (PackedEvent& slot : out) std::memset(static_cast<void*>(&slot), 0x5a, sizeof slot);
  ExpandRunRef(ref, out.data());
  for (size_t i = 0; i < out.size(); ++i)
    CheckStamped(out[i], blocks[i], 777, i == 0 ? 1000 : 1040);
  CHECK_FALSE(MakeRunRef(blocks.data(), 0, 0, 0, 0, 0, ref));
  CHECK_FALSE(MakeRunRef(blocks.data(), 5, 15, 777, 1041, 1040, ref));
}
