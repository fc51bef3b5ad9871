#include "sideband/image_spec.h"

#include <catch2/catch.hpp>

using namespace ptprof;

TEST_CASE("--raw accepts all of ptxed's forms") {
  auto a = ParseRawImageSpec("code.bin:0x1000");
  REQUIRE(a);
  CHECK(a->file == "code.bin");
  CHECK(a->address == 0x1000);
  CHECK(a->file_offset == 0);
  CHECK(a->size == UINT64_MAX);

  auto b = ParseRawImageSpec("code.bin:0x10:0x1000");
  REQUIRE(b);
  CHECK(b->file == "code.bin");
  CHECK(b->file_offset == 0x10);
  CHECK(b->size == UINT64_MAX);

  auto c = ParseRawImageSpec("dir:x/code.bin:0x10-0x30:4096");
  REQUIRE(c);
  CHECK(c->file == "dir:x/code.bin");
  CHECK(c->file_offset == 0x10);
  CHECK(c->size == 0x20);
  CHECK(c->address == 4096);

  CHECK_FALSE(ParseRawImageSpec("code.bin"));
  CHECK_FALSE(ParseRawImageSpec("code.bin:0x30-0x10:0x1000"));
  CHECK_FALSE(ParseRawImageSpec(":0x1000"));
}

TEST_CASE("--elf takes an optional base") {
  auto a = ParseElfImageSpec("hello");
  REQUIRE(a);
  CHECK(a->file == "hello");
  CHECK(a->base == 0);
  auto b = ParseElfImageSpec("lib.so:0x7f0000000000");
  REQUIRE(b);
  CHECK(b->file == "lib.so");
  CHECK(b->base == 0x7f0000000000);
}

TEST_CASE("--pt ranges") {
  auto a = ParseFileRangeSpec("pt.bin:16-32");
  REQUIRE(a);
  CHECK(a->file == "pt.bin");
  CHECK(a->offset == 16);
  CHECK(a->size == 16);
  auto b = ParseFileRangeSpec("pt.bin");
  REQUIRE(b);
  CHECK(b->size == UINT64_MAX);
}
