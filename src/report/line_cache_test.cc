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

TEST_CASE("a cache that makes many of its lines grows, and one that does not stays small") {
  LineCache busy, quiet;
  auto fill = [](LineCache& cache, uint64_t keys, uint64_t lookups) {
    for (uint64_t i = 0; i < lookups; ++i) {
      const uint64_t k = (i * 7919) % keys;
      const std::string& line = cache.Line({k, 0, 0}, [&](std::string& text) { text = std::to_string(k); });
      if (line != std::to_string(k)) return false;
    }
    return true;
  };
  CHECK(busy.capacity() == 4096);
  // 20000 keys in turn: most miss in 4096 slots, few in 65536.
  CHECK(fill(busy, 20000, 1 << 20));
  CHECK(busy.capacity() == 65536);
  // 16 keys in turn, none sharing a slot: each made once.
  CHECK(fill(quiet, 16, 1 << 20));
  CHECK(quiet.capacity() == 4096);
}
