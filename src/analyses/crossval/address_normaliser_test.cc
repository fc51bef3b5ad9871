#include "src/analyses/crossval/address_normaliser.h"

#include <catch2/catch.hpp>

using namespace ptprof;

TEST_CASE("addresses normalise to (file base name, file offset) through each process's mappings") {
  AddressNormaliser n;
  n.AddProcMaps(7,
                "555555554000-555555556000 r--p 00000000 08:01 12 /usr/bin/gzip\n"
                "555555556000-555555560000 r-xp 00002000 08:01 12 /usr/bin/gzip\n"
                "7ffff7fc3000-7ffff7fc5000 r-xp 00000000 00:00 0 [vdso]\n");
  n.AddMapping(-1, 0x4000000000, 0x1000, 0x1000, "/lib64/ld-linux-x86-64.so.2");
  auto a = n.Normalise(7, 0x555555556010);
  REQUIRE(a);
  CHECK(a->image == "gzip");
  CHECK(a->offset == 0x2010);
  CHECK_FALSE(n.Normalise(7, 0x555555554010));  // not executable
  CHECK_FALSE(n.Normalise(7, 0x7ffff7fc3000));  // the vdso has no file
  auto ld = n.Normalise(9, 0x4000000010);
  REQUIRE(ld);
  CHECK(ld->image == "ld-linux-x86-64.so.2");
  CHECK(ld->offset == 0x1010);
  CHECK(n.Images() == std::vector<std::string>{"gzip", "ld-linux-x86-64.so.2"});
}
