#include "sideband/syscall_table.h"

#include <catch2/catch.hpp>

namespace ptprof {
namespace {

TEST_CASE("x86-64 syscall numbers and names both ways") {
  CHECK(SyscallName(SyscallArch::kX86_64, 0) == "read");
  CHECK(SyscallName(SyscallArch::kX86_64, 9) == "mmap");
  CHECK(SyscallName(SyscallArch::kX86_64, 39) == "getpid");
  CHECK(SyscallName(SyscallArch::kX86_64, 257) == "openat");
  CHECK(SyscallName(SyscallArch::kX86_64, 231) == "exit_group");
  CHECK(SyscallName(SyscallArch::kX86_64, 435) == "clone3");
  CHECK_FALSE(SyscallName(SyscallArch::kX86_64, 400));  // the gap between 334 and 424
  CHECK(SyscallNumber(SyscallArch::kX86_64, "getpid") == 39u);
  CHECK_FALSE(SyscallNumber(SyscallArch::kX86_64, "getpidd"));
  CHECK(SyscallEntries(SyscallArch::kX86_64).size() > 350);
}

TEST_CASE("AArch64 uses the generic table") {
  CHECK(SyscallName(SyscallArch::kAArch64, 172) == "getpid");
  CHECK(SyscallName(SyscallArch::kAArch64, 222) == "mmap");
  CHECK(SyscallName(SyscallArch::kAArch64, 56) == "openat");
  CHECK(SyscallName(SyscallArch::kAArch64, 63) == "read");
  CHECK(SyscallName(SyscallArch::kAArch64, 93) == "exit");
  CHECK(SyscallNumber(SyscallArch::kAArch64, "fstat") == 80u);
  CHECK_FALSE(SyscallNumber(SyscallArch::kAArch64, "open"));  // only openat on the generic table
}

TEST_CASE("near names for a misspelt syscall") {
  auto near = NearSyscallNames(SyscallArch::kX86_64, "getpd", 3);
  REQUIRE(near.size() == 3);
  CHECK(near[0] == "getpid");
  auto prefix = NearSyscallNames(SyscallArch::kX86_64, "mma", 2);
  CHECK(prefix[0] == "mmap");
}

}  // namespace
}  // namespace ptprof
