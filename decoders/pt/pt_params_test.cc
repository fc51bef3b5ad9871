#include "decoders/pt/pt_params.h"

#include <catch2/catch.hpp>

using namespace ptprof::pt;

TEST_CASE("cpu specifications parse like ptxed's --cpu") {
  PtParams p;
  REQUIRE(ParseCpu("6/85/4", "--cpu", p));
  REQUIRE(p.cpu);
  CHECK(p.cpu->family == 6);
  CHECK(p.cpu->model == 85);
  CHECK(p.cpu->stepping == 4);
  REQUIRE(ParseCpu("6/92", "--cpu", p));
  CHECK(p.cpu->stepping == 0);
  REQUIRE(ParseCpu("none", "--cpu", p));
  CHECK(!p.cpu);
  auto bad = ParseCpu("6-85", "--cpu", p);
  REQUIRE(!bad);
  CHECK(bad.error().message.find("--cpu") == 0);
  CHECK(!ParseCpu("6/", "--cpu", p));
  CHECK(!ParseCpu("6/300", "--cpu", p));
}

TEST_CASE("unsigned numbers accept C notation and are bounded") {
  CHECK(*ParseUnsigned("0x10", "f", 255) == 16);
  CHECK(*ParseUnsigned("12", "f", 255) == 12);
  CHECK(!ParseUnsigned("256", "f", 255));
  CHECK(!ParseUnsigned("-1", "f", 255));
  CHECK(!ParseUnsigned("12x", "f", 255));
  CHECK(!ParseUnsigned("", "f", 255));
}

TEST_CASE("address filters parse as N:CFG:FROM-TO") {
  PtParams params;
  REQUIRE(ParseAddressFilter("1:1:0x401000-0x402000", params));
  CHECK(params.filter[1].cfg == 1);
  CHECK(params.filter[1].a == 0x401000);
  CHECK(params.filter[1].b == 0x402000);
  CHECK(params.filter[0].cfg == 0);
  CHECK_FALSE(ParseAddressFilter("4:1:0-1", params));
  CHECK_FALSE(ParseAddressFilter("0:16:0-1", params));
  CHECK_FALSE(ParseAddressFilter("0:1:0x10", params));
  CHECK(ParseAddressFilter("0:1", params).error().message ==
        "--addr-filter 0:1: expected N:CFG:FROM-TO (N 0-3, CFG 0-15)");
}
