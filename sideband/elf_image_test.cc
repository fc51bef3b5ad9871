#include "sideband/elf_image.h"

#include <sys/stat.h>

#include <catch2/catch.hpp>

using namespace ptprof;

// A function of this very test program, so that the ELF we load (our own executable) has a
// symbol we know.
extern "C" int ptprof_elf_image_test_marker(int x) { return x * 3 + 1; }

TEST_CASE("loads our own executable's segments and symbols") {
  auto image = LoadElfImage("/proc/self/exe", 0);
  REQUIRE(image);
  CHECK_FALSE(image->segments.empty());
  bool has_code = false;
  for (const auto& s : image->segments) has_code |= s.executable;
  CHECK(has_code);
  bool found = false;
  for (const auto& s : image->symbols) found |= s.name == "ptprof_elf_image_test_marker";
  CHECK(found);
}

TEST_CASE("a base relocates the lowest PT_LOAD segment to it") {
  auto plain = LoadElfImage("/proc/self/exe", 0);
  auto moved = LoadElfImage("/proc/self/exe", 0x7f0000000000);
  REQUIRE(plain);
  REQUIRE(moved);
  REQUIRE(plain->segments.size() == moved->segments.size());
  uint64_t lowest = UINT64_MAX;
  for (const auto& s : moved->segments) lowest = std::min(lowest, s.address);
  CHECK(lowest == 0x7f0000000000);
  CHECK(moved->segments[1].address - plain->segments[1].address == moved->bias);
}

TEST_CASE("the Skylake test program: code at 0x401000, _start") {
  std::string hello =
      std::string(SHARED_TESTDATA) + "/dynamorio/clients/drcachesim/drpt2trace/test_simple.raw/hello";
  struct stat st {};
  if (stat(hello.c_str(), &st) != 0) {
    WARN("shared test data absent: skipping " << hello);
    return;
  }
  auto image = LoadElfImage(hello, 0);
  REQUIRE(image);
  REQUIRE(image->segments.size() == 3);
  CHECK(image->segments[1].address == 0x401000);
  CHECK(image->segments[1].file_offset == 0x1000);
  CHECK(image->segments[1].file_size == 0x27);
  CHECK(image->segments[1].executable);
  bool start = false;
  for (const auto& s : image->symbols) start |= (s.name == "_start" && s.address == 0x401000);
  CHECK(start);
}

TEST_CASE("errors name the file") {
  auto missing = LoadElfImage("/nonexistent/file", 0);
  REQUIRE_FALSE(missing);
  CHECK(missing.error().message.find("/nonexistent/file") == 0);
  auto not_elf = LoadElfImage("/proc/self/cmdline", 0);
  REQUIRE_FALSE(not_elf);
}
