#include "src/archive/provenance.h"

#include <unistd.h>

#include <regex>

#include <catch2/catch.hpp>

using namespace ptprof::archive;

TEST_CASE("a new manifest says who made it, when, where and from what") {
  const Manifest m = NewManifest("ptprof 9", "qemu", {"/bin/true", "x"});
  CHECK(m.tool == "ptprof 9");
  CHECK(std::regex_match(m.created, std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")));
  CHECK(m.source.kind == "qemu");
  CHECK(m.source.paths == std::vector<std::string>{"/bin/true", "x"});
  char host[256] = {};
  REQUIRE(gethostname(host, sizeof host - 1) == 0);
  CHECK(m.source.host == host);
  CHECK(HostName() == host);
  CHECK(m.streams.empty());
}
