#include "src/report/line_cache.h"

#include <catch2/catch.hpp>

#include <string>

using namespace ptprof;

TEST_CASE("a line is made once for its key, and again after another took its slot") {
  LineCache cache;
  int made = 0;
  auto line = [&](uint64_t a, uint64_t b, uint64_t c) {
    return cache.Line({a, b, c}, [&](std::string& text) {
      CHECK(text.empty());
      ++made;
      text = std::to_string(a) + "/" + std::to_string(b) + "/" + std::to_string(c);
    });
  };
  CHECK(line(1, 2, 3) == "1/2/3");
  CHECK(line(1, 2, 3) == "1/2/3");
  CHECK(made == 1);
  CHECK(line(1, 2, 4) == "1/2/4");  // any part of the key tells lines apart
  CHECK(line(2, 1, 3) == "2/1/3");
  CHECK(made == 3);
  // Far more keys than slots: every line is still the one its key makes.
  for (uint64_t i = 0; i < 20000; ++i) CHECK(line(i, i * 7, 0) == std::to_string(i) + "/" + std::to_string(i * 7) + "/0");
  for (uint64_t i = 0; i < 20000; i += 13) CHECK(line(i, i * 7, 0) == std::to_string(i) + "/" + std::to_string(i * 7) + "/0");
}
