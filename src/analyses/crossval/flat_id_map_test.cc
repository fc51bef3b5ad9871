#include "src/analyses/crossval/flat_id_map.h"

#include <catch2/catch.hpp>

#include <map>
#include <random>

using namespace ptprof;

namespace {

// Every key in one slot's reach: the probing, not the hash, finds them.
struct OneHash {
  uint64_t operator()(uint64_t) const { return 0; }
};

}  // namespace

TEST_CASE("a key keeps the number it was first given, across growth") {
  FlatIdMap<uint64_t, std::hash<uint64_t>> map;
  std::map<uint64_t, uint32_t> expected;
  std::mt19937_64 random(7);
  for (uint32_t n = 0; n < 100000; ++n) {
    const uint64_t key = random() % 40000 << 32 | random() % 3;
    auto [value, added] = map.TryEmplace(key, n);
    auto [it, fresh] = expected.try_emplace(key, n);
    REQUIRE(added == fresh);
    REQUIRE(*value == it->second);
  }
  CHECK(map.size() == expected.size());
  for (uint64_t key = 0; key < 45000; key += 7) {
    const uint64_t probe = key << 32 | key % 4;  // a low part of 3 was never added
    const uint32_t* found = map.Find(probe);
    const auto it = expected.find(probe);
    REQUIRE((found != nullptr) == (it != expected.end()));
    if (found) REQUIRE(*found == it->second);
  }
  CHECK(map.size() > 5000);  // grown many times from 1,024 slots
}

TEST_CASE("keys of one hash are told apart") {
  FlatIdMap<uint64_t, OneHash> map;
  CHECK(map.Find(0) == nullptr);  // (no slots yet)
  for (uint32_t n = 0; n < 3000; ++n) CHECK(map.TryEmplace(n * 17, n).second);
  for (uint32_t n = 0; n < 3000; ++n) {
    auto [value, added] = map.TryEmplace(n * 17, 0);
    CHECK(!added);
    CHECK(*value == n);
    CHECK(*map.Find(n * 17) == n);
  }
  CHECK(map.Find(3000 * 17) == nullptr);
  *map.TryEmplace(34, 0).first = 99;  // the number may be set through the pointer
  CHECK(*map.TryEmplace(34, 0).first == 99);
}
