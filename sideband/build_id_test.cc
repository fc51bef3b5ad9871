#include "sideband/build_id.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include <unistd.h>

#include <catch2/catch.hpp>

using namespace ptprof;

namespace {
// SOURCE_ROOT when the test runner sets it, else relative to this source file (meson runs tests
// from the build directory and names sources relative to it).
std::string SamplePath() {
  if (const char* root = std::getenv("SOURCE_ROOT")) return std::string(root) + "/traces/sample/sample";
  std::string here = __FILE__;
  return here.substr(0, here.rfind('/')) + "/../traces/sample/sample";
}
}  // namespace

TEST_CASE("the build-id of the sample program (readelf -n shows the same)") {
  auto id = ReadBuildId(SamplePath());
  REQUIRE(id);
  REQUIRE(id->has_value());
  CHECK(**id == "46643ff0cf62ee72a7fca059aae56acf3bd7867d");
}

TEST_CASE("build-id errors name the file") {
  auto missing = ReadBuildId("/nonexistent/binary");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().message.find("/nonexistent/binary") == 0);

  char path[] = "/tmp/ptprof-build-id-XXXXXX";
  const int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  REQUIRE(write(fd, "not an elf file", 15) == 15);
  close(fd);
  auto not_elf = ReadBuildId(path);
  std::remove(path);
  REQUIRE_FALSE(not_elf);
  CHECK(not_elf.error().message == std::string(path) + ": offset 0x0: not an ELF file");
}
