#include "src/analyses/crossval/branch_edges.h"

#include <catch2/catch.hpp>

using namespace ptprof;

TEST_CASE("an edge keeps the number it was first given; an unknown one is made only on request") {
  EdgeTable t;
  const uint32_t img = t.ImageId("prog");
  const uint32_t lib = t.ImageId("lib.so");
  CHECK(t.ImageId("prog") == img);
  CHECK(t.ImageName(lib) == "lib.so");
  const uint32_t a = t.EdgeId({img, 1}, {img, 2}, true);
  const uint32_t b = t.EdgeId({img, 1}, {lib, 2}, true);
  CHECK(a != b);
  CHECK(t.EdgeId({img, 1}, {img, 2}, false) == a);
  CHECK(t.EdgeId({img, 9}, {img, 9}, false) == kNoEdge);
  CHECK(t.size() == 2);
  CHECK(t.Edge(b).second == Location{lib, 2});
}
