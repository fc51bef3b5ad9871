#include "src/record/triggers/breakpoint_probe.h"

#include <catch2/catch.hpp>

#include <string>

TEST_CASE("the breakpoint probe answers, and says why when breakpoints do not fire") {
  std::string why;
  const bool fire = ptprof::record::triggers::ExecuteBreakpointsFire(&why);
  if (fire) {
    CHECK(why.empty());
  } else {
    CHECK_FALSE(why.empty());
    WARN("hardware breakpoints: " << why);
  }
  // The same answer again: the probe leaves nothing behind.
  CHECK(ptprof::record::triggers::ExecuteBreakpointsFire() == fire);
}
