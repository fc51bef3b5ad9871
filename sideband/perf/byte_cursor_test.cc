#include "sideband/perf/byte_cursor.h"

#include <vector>

#include <catch2/catch.hpp>

using ptprof::perf::ByteCursor;

TEST_CASE("ByteCursor reads little-endian values and never past the end") {
  std::vector<uint8_t> bytes = {0x01, 0x02, 0x03, 0x04, 'a', 'b', 0, 'z', 0x05};
  ByteCursor c(bytes, 0x100);
  uint16_t u16 = 0;
  REQUIRE(c.Read(u16));
  CHECK(u16 == 0x0201);
  CHECK(c.offset() == 0x102);
  uint64_t u64 = 0;
  CHECK_FALSE(c.Read(u64));  // 7 bytes left: refused, position unchanged
  CHECK(c.offset() == 0x102);
  CHECK(c.Skip(2));
  std::string s;
  REQUIRE(c.String(4, s));
  CHECK(s == "ab");
  CHECK(c.remaining() == 1);
  CHECK_FALSE(c.Skip(2));
  CHECK(c.RestAsString() == "\x05");
  CHECK(c.empty());
}
