#include "decoders/etm/ini_file.h"

#include <catch2/catch.hpp>

using namespace ptprof::etm;

TEST_CASE("ini sections and entries keep their lines") {
  auto ini = ParseIni("x.ini", "; comment\n[device]\nname=ETM_0\n\n[regs]\nTRCIDR0(0x078) = 0x28000EA1\n");
  REQUIRE(ini);
  REQUIRE(ini->sections.size() == 2);
  CHECK(ini->Find("DEVICE")->Find("Name")->value == "ETM_0");
  const IniEntry* reg = ini->Find("regs")->Find("TRCIDR0(0x078)");
  REQUIRE(reg);
  CHECK(reg->value == "0x28000EA1");
  CHECK(reg->line == 6);
  CHECK(ini->Find("dump1") == nullptr);
}

TEST_CASE("ini errors name the file and line") {
  auto no_section = ParseIni("a.ini", "name=x\n");
  REQUIRE(!no_section);
  CHECK(no_section.error().message == "a.ini:1: entry 'name' before any [section]");
  auto garbage = ParseIni("b.ini", "[s]\n\nthis is not ini\n");
  REQUIRE(!garbage);
  CHECK(garbage.error().message.rfind("b.ini:3: expected 'key=value'", 0) == 0);
  auto header = ParseIni("c.ini", "[broken\n");
  REQUIRE(!header);
  CHECK(header.error().message.rfind("c.ini:1: malformed section header", 0) == 0);
  auto missing = ReadIni("/nonexistent/snapshot.ini");
  REQUIRE(!missing);
  CHECK(missing.error().message.find("/nonexistent/snapshot.ini") != std::string::npos);
}
