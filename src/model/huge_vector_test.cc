#include "src/model/huge_vector.h"

#include <vector>

#include <catch2/catch.hpp>

using namespace ptprof;

TEST_CASE("a huge vector keeps its values as it grows from the heap into huge pages") {
  HugeVector<double> values;
  std::vector<double> reference;
  // 3 M doubles: 24 MB, past several doublings in the mapping.
  for (size_t i = 0; i < 3'000'000; ++i) {
    const double v = static_cast<double>(i * 7 % 1000) + 0.5;
    values.push_back(v);
    reference.push_back(v);
    if (i == 1000) CHECK_FALSE(values.mapped());
  }
  CHECK(values.mapped() != HugeSlabs::PiecesOnTheHeap());
  REQUIRE(values.size() == reference.size());
  CHECK(std::equal(values.begin(), values.end(), reference.begin()));

  HugeVector<double> copy = values;
  CHECK(copy == values);
  copy[5] = -1;
  CHECK_FALSE(copy == values);
  HugeVector<double> moved = std::move(copy);
  CHECK(moved[5] == -1);
  CHECK(moved.size() == values.size());
}

TEST_CASE("a huge vector of a size that does not divide the slab") {
  struct Twelve {
    uint32_t a, b, c;
  };
  HugeVector<Twelve> values;
  for (uint32_t i = 0; i < 500'000; ++i) values.push_back({i, i + 1, i + 2});
  REQUIRE(values.size() == 500'000);
  for (uint32_t i = 0; i < 500'000; i += 9999) {
    CHECK(values[i].a == i);
    CHECK(values[i].c == i + 2);
  }
  CHECK((HugeVector<int>{1, 2, 3} == HugeVector<int>{1, 2, 3}));
  CHECK(HugeVector<int>{}.empty());
}
