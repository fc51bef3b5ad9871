#include "src/record/swbt/proc_maps.h"

#include <catch2/catch.hpp>

namespace ptprof::swbt {
namespace {

constexpr const char* kMaps =
    "555555554000-555555555000 r--p 00000000 08:01 123    /usr/bin/prog\n"
    "555555555000-555555556000 r-xp 00001000 08:01 123    /usr/bin/prog\n"
    "7ffff7dd0000-7ffff7df0000 r-xp 00026000 08:01 77     /lib/x86_64-linux-gnu/libc.so.6\n"
    "7ffff7ff0000-7ffff7ff2000 r-xp 00000000 00:00 0      [vdso]\n"
    "7ffff7ff3000-7ffff7ff4000 rw-p 00000000 00:00 0 \n"
    "garbage\n";

TEST_CASE("swbt: /proc/PID/maps lines and the executable files they map") {
  const auto lines = ParseProcMaps(kMaps);
  REQUIRE(lines.size() == 5);
  CHECK(lines[1].start == 0x555555555000);
  CHECK(lines[1].offset == 0x1000);
  CHECK(lines[1].perms == "r-xp");
  CHECK(lines[1].path == "/usr/bin/prog");
  CHECK(lines[3].path == "[vdso]");
  CHECK(lines[4].path.empty());
  const auto files = ExecutableFiles(lines);
  REQUIRE(files.size() == 2);
  CHECK(files[0].path == "/usr/bin/prog");
  CHECK(files[0].base == 0x555555554000);
  CHECK(files[1].base == 0x7ffff7dd0000 - 0x26000);
  REQUIRE(FindMapping(lines, 0x555555555010) == &lines[1]);
  CHECK(FindMapping(lines, 0x10) == nullptr);
}

}  // namespace
}  // namespace ptprof::swbt
