#include "src/analyses/crossval/branch_edges.h"

#include <catch2/catch.hpp>

using namespace ptprof;

TEST_CASE("a run is found only contiguously inside one run of the flow") {
  EdgeTable t;
  const uint32_t img = t.ImageId("prog");
  auto e = [&](uint64_t from, uint64_t to) { return t.EdgeId({img, from}, {img, to}, true); };
  const uint32_t a = e(1, 2), b = e(3, 4), c = e(5, 6);
  // Thread 1: a b a b, a break, c; thread 2: a.
  const EdgeSequence sequence = {a, b, a, b, kNoEdge, c, kNoEdge, a, kNoEdge};
  const FlowEdgeIndex flow(sequence, t.size());
  CHECK(flow.Contains({a, b, a}));
  CHECK(flow.Contains({b, a, b}));
  CHECK_FALSE(flow.Contains({b, c}));  // across a break
  CHECK_FALSE(flow.Contains({a, a}));
  CHECK_FALSE(flow.Contains({a, kNoEdge}));
  CHECK(t.EdgeId({img, 9}, {img, 9}, false) == kNoEdge);
}
