#include "src/report/spare_pool.h"

#include <catch2/catch.hpp>

#include <string>

using namespace ptprof;

TEST_CASE("a pool hands back what it was given, and makes what it does not hold") {
  SparePool<std::string> pool;
  int made = 0;
  auto make = [&] {
    ++made;
    return std::string("new");
  };
  CHECK(pool.Take(make) == "new");
  pool.Give("kept one");
  pool.Give("kept two", 2);
  pool.Give("one too many", 2);  // two are kept already
  CHECK(pool.Take(make) == "kept two");
  CHECK(pool.Take(make) == "kept one");
  CHECK(pool.Take(make) == "new");
  CHECK(made == 2);
}
