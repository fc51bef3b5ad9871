#pragma once
// The sample program's code (flow_testing.h) as the fast engine's code graph, for its tests:
//   1000 nop; 1001 je 1005; 1003 nop; 1004 nop; 1005 call 1010; 100a syscall; 100c nop...
//   1010 nop; 1011 ret
#include <catch2/catch.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "decoders/pt/fast/code_blocks.h"
#include "decoders/pt/flow_testing.h"
#include "decoders/pt/image_cache.h"
#include "sideband/image_set.h"

namespace ptprof::pt::testing {

struct SampleGraph {
  // The sample program, or other code at the same address.
  explicit SampleGraph(const std::vector<uint8_t>& bytes = SampleProgram()) : code(bytes) {
    REQUIRE(images.AddRaw(RawImageSpec{code.path(), 0, UINT64_MAX, kSampleBase}));
    REQUIRE(cache.AddAll(images));
    blocks = std::make_unique<fast::CodeBlocks>(cache);
  }
  // The 64-bit block at `ip`, which must decode.
  const fast::CodeBlock* At(uint64_t ip) {
    std::string why;
    const fast::CodeBlock* block = blocks->Block(ip, ptem_64bit, why);
    REQUIRE(block);
    return block;
  }
  TempFile code;
  ImageSet images;
  PtImageCache cache;
  std::unique_ptr<fast::CodeBlocks> blocks;
};

}  // namespace ptprof::pt::testing
