#include "src/analyses/crossval/burst_matcher.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <thread>
#include <vector>

using namespace ptprof;

namespace {

using Edges = std::vector<uint32_t>;

// Whether `burst` occurs contiguously in `flow`.
bool Occurs(const Edges& flow, const Edges& burst) {
  return std::search(flow.begin(), flow.end(), burst.begin(), burst.end()) != flow.end();
}

Edges RandomEdges(std::mt19937& random, size_t n, uint32_t alphabet) {
  Edges out(n);
  for (uint32_t& e : out) e = random() % alphabet;
  return out;
}

}  // namespace

TEST_CASE("a burst is found exactly when it occurs in the flow, also inside another") {
  BurstMatcher m;
  const uint32_t abc = m.Add(Edges{1, 2, 3});
  const uint32_t b = m.Add(Edges{2});
  const uint32_t bcd = m.Add(Edges{2, 3, 4});
  const uint32_t abd = m.Add(Edges{1, 2, 4});
  CHECK(m.Add(Edges{1, 2, 3}) == abc);  // the same burst, the same number
  CHECK(m.bursts() == 4);
  CHECK(m.longest() == 3);
  m.Build();
  BurstMatcher::State s = BurstMatcher::kRoot;
  for (uint32_t e : {7u, 1u, 2u, 3u, 9u}) s = m.Step(s, e);  // 7 and 9: in no burst
  CHECK(s == BurstMatcher::kRoot);
  CHECK(m.Found(abc));
  CHECK(m.Found(b));  // inside 1 2 3, through the output links
  CHECK_FALSE(m.Found(bcd));
  CHECK_FALSE(m.Found(abd));
  for (uint32_t e : {1u, 1u, 2u, 3u, 4u}) s = m.Step(s, e);  // 1 2 3 4 after a false start
  CHECK(m.Found(bcd));
  CHECK_FALSE(m.Found(abd));
}

TEST_CASE("random bursts over a small alphabet are found as a search finds them") {
  std::mt19937 random(7);
  for (int round = 0; round < 200; ++round) {
    const uint32_t alphabet = 2 + round % 5;
    std::vector<Edges> bursts;
    for (int i = 0, n = 1 + round % 40; i < n; ++i)
      bursts.push_back(RandomEdges(random, 1 + random() % 7, alphabet + 1));  // some never in the flow
    const Edges flow = RandomEdges(random, random() % 300, alphabet);
    BurstMatcher m;
    std::vector<uint32_t> ids;
    for (const Edges& burst : bursts) ids.push_back(m.Add(burst));
    m.Build();
    BurstMatcher::State s = BurstMatcher::kRoot;
    for (uint32_t e : flow) s = m.Step(s, e);
    for (size_t i = 0; i < bursts.size(); ++i) {
      INFO("round " << round << ", burst " << i);
      CHECK(m.Found(ids[i]) == Occurs(flow, bursts[i]));
    }
  }
}

TEST_CASE("a flow cut in two: the second part from the root, its head read again from the first's state") {
  std::mt19937 random(11);
  for (int round = 0; round < 300; ++round) {
    const uint32_t alphabet = 2 + round % 3;
    std::vector<Edges> bursts;
    for (int i = 0; i < 12; ++i) bursts.push_back(RandomEdges(random, 1 + random() % 6, alphabet));
    const Edges flow = RandomEdges(random, 1 + random() % 60, alphabet);
    const size_t cut = random() % (flow.size() + 1);
    BurstMatcher whole, parts;
    std::vector<uint32_t> ids;
    for (const Edges& burst : bursts) {
      ids.push_back(whole.Add(burst));
      parts.Add(burst);
    }
    whole.Build();
    parts.Build();
    BurstMatcher::State all = BurstMatcher::kRoot, first = BurstMatcher::kRoot,
                        second = BurstMatcher::kRoot;
    for (uint32_t e : flow) all = whole.Step(all, e);
    for (size_t i = 0; i < cut; ++i) first = parts.Step(first, flow[i]);
    for (size_t i = cut; i < flow.size(); ++i) second = parts.Step(second, flow[i]);
    // The seam: the second part's first longest() edges from the first part's state.
    const size_t head = std::min<size_t>(flow.size() - cut, parts.longest());
    BurstMatcher::State seam = first;
    for (size_t i = cut; i < cut + head; ++i) seam = parts.Step(seam, flow[i]);
    const BurstMatcher::State end = head < parts.longest() ? seam : second;
    INFO("round " << round << ", cut at " << cut << " of " << flow.size());
    CHECK(end == all);
    for (uint32_t id : ids) CHECK(parts.Found(id) == whole.Found(id));
  }
}

TEST_CASE("two threads stepping at once find what either flow holds and only that") {
  std::mt19937 random(5);
  for (int round = 0; round < 50; ++round) {
    std::vector<Edges> bursts;
    for (int i = 0; i < 30; ++i) bursts.push_back(RandomEdges(random, 1 + random() % 5, 4));
    const Edges one = RandomEdges(random, 20000, 3), other = RandomEdges(random, 20000, 4);
    BurstMatcher m;
    std::vector<uint32_t> ids;
    for (const Edges& burst : bursts) ids.push_back(m.Add(burst));
    m.Build();
    auto walk = [&m](const Edges& flow) {
      BurstMatcher::State s = BurstMatcher::kRoot;
      for (uint32_t e : flow) s = m.Step(s, e);
    };
    std::thread first(walk, std::cref(one));
    walk(other);
    first.join();
    for (size_t i = 0; i < bursts.size(); ++i) {
      INFO("round " << round << ", burst " << i);
      CHECK(m.Found(ids[i]) == (Occurs(one, bursts[i]) || Occurs(other, bursts[i])));
    }
  }
}

TEST_CASE("a matcher with no bursts stays at the root") {
  BurstMatcher m;
  m.Build();
  CHECK(m.bursts() == 0);
  CHECK(m.Step(BurstMatcher::kRoot, 5) == BurstMatcher::kRoot);
  CHECK_THROWS(m.Add(Edges{1}));
  BurstMatcher n;
  CHECK_THROWS(n.Add(Edges{}));
}
