#include "src/report/svg_text.h"

#include <catch2/catch.hpp>

namespace ptprof {
namespace {

TEST_CASE("SVG text is escaped and coordinates have one decimal") {
  CHECK(SvgEscape("a<b & \"c\">") == "a&lt;b &amp; &quot;c&quot;&gt;");
  CHECK(SvgEscape("plain") == "plain");
  CHECK(SvgCoord(12.25) == "12.2");
  CHECK(SvgCoord(3) == "3.0");
}

}  // namespace
}  // namespace ptprof
