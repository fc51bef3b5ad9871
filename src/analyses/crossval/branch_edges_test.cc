#include "src/analyses/crossval/branch_edges.h"

#include <catch2/catch.hpp>

using namespace ptprof;

TEST_CASE("a run is found only contiguously inside one run of the flow") {
  EdgeTable t;
  const uint32_t img = t.ImageId("prog");
  auto e = [&](uint64_t from, uint64_t to) { return t.EdgeId({img, from}, {img, to}, true); };
  const uint32_t a = e(1, 2), b = e(3, 4), c = e(5, 6);
  FlowEdgeIndex flow;
  for (uint32_t id : {a, b, a, b}) flow.Add(1, id);
  flow.Break(1);
  flow.Add(1, c);
  flow.Add(2, a);  // another thread
  flow.Finish(t.size());
  CHECK(flow.branches() == 6);
  CHECK(flow.runs() == 3);
  CHECK(flow.Contains({a, b, a}));
  CHECK(flow.Contains({b, a, b}));
  CHECK_FALSE(flow.Contains({b, c}));  // across a break
  CHECK_FALSE(flow.Contains({a, a}));
  CHECK_FALSE(flow.Contains({a, kNoEdge}));
  CHECK(t.EdgeId({img, 9}, {img, 9}, false) == kNoEdge);
}
