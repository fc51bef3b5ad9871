#include "src/analyses/patterns/insn_cache.h"

#include <cstdio>
#include <string>

#include <unistd.h>

#include <catch2/catch.hpp>

#include "src/analyses/patterns/pattern_parser.h"

using namespace ptprof;
using namespace ptprof::patterns;

TEST_CASE("the cache decodes each address once and knows where there is no code") {
  // pushfq ; pop rax ; cli ; pause
  std::vector<uint8_t> code = {0x9c, 0x58, 0xfa, 0xf3, 0x90};
  char path[] = "/tmp/ptprof_insn_cache_XXXXXX";
  int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  REQUIRE(write(fd, code.data(), code.size()) == static_cast<ssize_t>(code.size()));
  close(fd);
  ImageSet images;
  REQUIRE(images.AddRaw(RawImageSpec{path, 0, UINT64_MAX, 0x1000}));
  auto cli = ParsePattern("c", "cli");
  auto pause = ParsePattern("p", "pause");
  REQUIRE(cli);
  REQUIRE(pause);
  auto matcher = PatternMatcher::Compile({*cli, *pause});
  REQUIRE(matcher);
  InsnCache cache(images, *matcher);
  CHECK(cache.At(0x1000, ExecMode::k64Bit).length == 1);
  CHECK(cache.At(0x1000, ExecMode::k64Bit).atoms == 0);
  CHECK(cache.At(0x1002, ExecMode::k64Bit).atoms == 1);
  CHECK(cache.At(0x1003, ExecMode::k64Bit).atoms == 2);
  CHECK(cache.At(0x1003, ExecMode::k64Bit).length == 2);
  CHECK(cache.decoded() == 3);
  CHECK(cache.disassembled() == 2);  // pushfq is only length-decoded: no pattern names it
  CHECK(cache.At(0x2000, ExecMode::k64Bit).length == 0);
  CHECK(cache.Describe(0x1001, ExecMode::k64Bit) == "pop rax");
  unlink(path);
}
