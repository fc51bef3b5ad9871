#include "src/model/json_text.h"

#include <cinttypes>
#include <cstdio>

#include <catch2/catch.hpp>

using namespace ptprof;

TEST_CASE("Addresses are spelled 0x and lower-case hex, numbers in decimal") {
  CHECK(HexAddress(0) == "0x0");
  CHECK(HexAddress(0x401000) == "0x401000");
  CHECK(HexAddress(UINT64_MAX) == "0xffffffffffffffff");
  std::string out = "a";
  AppendHexAddress(out, 0xdeadbeef);
  AppendDecimal(out, 0);
  AppendDecimal(out, UINT64_MAX);
  CHECK(out == "a0xdeadbeef018446744073709551615");
  char buf[kMaxHexAddress];
  CHECK(std::string(buf, PutHexAddress(buf, UINT64_MAX)) == "0xffffffffffffffff");
}

TEST_CASE("Padded decimals are what printf's %*" PRIu64 " writes") {
  for (uint64_t value : {uint64_t{0}, uint64_t{7}, uint64_t{1234567890123}, UINT64_MAX}) {
    for (int width : {0, 1, 5, 14, 25}) {
      char expected[64];
      std::snprintf(expected, sizeof expected, "%*" PRIu64, width, value);
      std::string out = "x";
      AppendPaddedDecimal(out, value, static_cast<size_t>(width));
      INFO(value << " in " << width);
      CHECK(out == std::string("x") + expected);
    }
  }
}

TEST_CASE("JSON strings escape quotes, backslashes and control characters") {
  CHECK(JsonString("plain") == "\"plain\"");
  CHECK(JsonString("a\"b\\c") == "\"a\\\"b\\\\c\"");
  CHECK(JsonString("\n\r\t") == "\"\\n\\r\\t\"");
  CHECK(JsonString(std::string_view("\x01", 1)) == "\"\\u0001\"");
}

TEST_CASE("CSV fields are quoted always (CsvQuoted) or when they need it (CsvField)") {
  CHECK(CsvQuoted("plain") == "\"plain\"");
  CHECK(CsvQuoted("say \"hi\"") == "\"say \"\"hi\"\"\"");
  CHECK(CsvQuoted("") == "\"\"");
  CHECK(CsvField("main") == "main");
  CHECK(CsvField("") == "");
  CHECK(CsvField("f(int, int)") == "\"f(int, int)\"");
  CHECK(CsvField("quote\"d") == "\"quote\"\"d\"");
  CHECK(CsvField("two\nlines") == "\"two\nlines\"");
}
