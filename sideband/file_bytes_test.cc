#include "sideband/file_bytes.h"

#include <cstdio>
#include <fstream>

#include <unistd.h>

#include <catch2/catch.hpp>

using namespace ptprof;

TEST_CASE("whole files and ranges are read, errors name the file") {
  char name[] = "/tmp/ptprof_file_bytes_XXXXXX";
  int fd = mkstemp(name);
  REQUIRE(fd >= 0);
  close(fd);
  std::string path = name;
  { std::ofstream(path, std::ios::binary) << "abcdef"; }
  auto all = ReadFileBytes(path);
  REQUIRE(all);
  CHECK(all->size() == 6);
  auto mid = ReadFileRange(path, 2, 3);
  REQUIRE(mid);
  CHECK(std::string(mid->begin(), mid->end()) == "cde");
  auto past = ReadFileRange(path, 2, 10);
  REQUIRE(!past);
  CHECK(past.error().message.rfind(path, 0) == 0);
  std::remove(path.c_str());
  auto missing = ReadFileBytes(path);
  REQUIRE(!missing);
  CHECK(missing.error().message.find("cannot open") != std::string::npos);
}
