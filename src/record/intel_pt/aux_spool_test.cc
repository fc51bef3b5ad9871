#include "src/record/intel_pt/aux_spool.h"

#include <dirent.h>

#include <catch2/catch.hpp>

namespace hw = ptprof::record::hw;

TEST_CASE("AuxSpool gives back everything appended, mapped, and leaves no file behind") {
  auto spool = hw::AuxSpool::Create();
  REQUIRE(spool);
  std::vector<uint8_t> expected;
  for (int piece = 0; piece < 50; ++piece) {
    std::vector<uint8_t> bytes(1000 + piece * 37);
    for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(piece * 31 + i);
    REQUIRE(spool->Append(bytes));
    expected.insert(expected.end(), bytes.begin(), bytes.end());
  }
  REQUIRE(spool->Append({}));
  CHECK(spool->size() == expected.size());
  auto bytes = spool->Finish();
  REQUIRE(bytes);
  CHECK(bytes->mapped());
  CHECK(*bytes == expected);
  CHECK(!spool->Append(expected));  // finished: closed
  auto empty = hw::AuxSpool::Create();
  REQUIRE(empty);
  auto none = empty->Finish();
  REQUIRE(none);
  CHECK(none->empty());
}
