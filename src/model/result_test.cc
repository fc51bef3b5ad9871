#include "src/model/result.h"

#include <catch2/catch.hpp>

using namespace ptprof;

namespace {
Result<int> Half(int v) {
  if (v % 2) return Fail("odd value " + std::to_string(v));
  return v / 2;
}
}  // namespace

TEST_CASE("Result carries a value or one error line") {
  auto ok = Half(4);
  REQUIRE(ok);
  CHECK(*ok == 2);
  auto bad = Half(3);
  REQUIRE(!bad);
  CHECK(bad.error().message == "odd value 3");
}
