#include "sideband/visible_ranges.h"

#include <random>
#include <thread>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

using namespace ptprof;

namespace {

// The rule by definition: the latest section that holds the address shows there, up to its end
// or to the start of a section added after it, whichever comes first.
struct Expected {
  bool mapped = false;
  uint32_t section = 0;
  uint64_t end = 0;
};
struct Section {
  uint64_t address = 0;
  uint64_t size = 0;
};
Expected Linear(const std::vector<Section>& sections, uint64_t address) {
  for (size_t i = sections.size(); i-- > 0;) {
    const Section& s = sections[i];
    if (address < s.address || address - s.address >= s.size) continue;
    uint64_t end = s.address + s.size;
    for (size_t later = i + 1; later < sections.size(); ++later)
      if (sections[later].size > 0 && sections[later].address > address &&
          sections[later].address < end)
        end = sections[later].address;
    return Expected{true, static_cast<uint32_t>(i), end};
  }
  return Expected{};
}

}  // namespace

TEST_CASE("A later section hides what it covers of an earlier one", "[visible_ranges]") {
  VisibleRanges visible;
  visible.Add(0x1000, 0x40, 0);
  visible.Add(0x1020, 0x8, 1);
  visible.Add(0x2000, 0, 2);
  const VisibleRanges::Range* range = visible.Find(0x101c);
  REQUIRE(range);
  CHECK(range->id == 0);
  CHECK(range->end == 0x1020);  // stops where the later section starts
  range = visible.Find(0x1027);
  REQUIRE(range);
  CHECK(range->id == 1);
  CHECK(range->end == 0x1028);
  range = visible.Find(0x1028);
  REQUIRE(range);
  CHECK(range->id == 0);  // the earlier one shows again after it
  CHECK(range->end == 0x1040);
  CHECK_FALSE(visible.Find(0x1040));
  CHECK_FALSE(visible.Find(0xfff));
  CHECK_FALSE(visible.Find(0x2000));  // an empty section maps nothing
  CHECK(visible.size() == 3);
}

TEST_CASE("Visible ranges answer as the sections searched one by one", "[visible_ranges]") {
  std::mt19937_64 random(7);
  for (int round = 0; round < 200; ++round) {
    std::vector<Section> sections(1 + random() % 12);
    for (auto& s : sections) {
      s.address = 0x1000 + random() % 0x200;
      s.size = random() % 5 == 0 ? 0 : 1 + random() % 0x100;
    }
    VisibleRanges visible;
    for (size_t i = 0; i < sections.size(); ++i)
      visible.Add(sections[i].address, sections[i].size, i);
    for (uint64_t address = 0xff0; address < 0x1310; ++address) {
      const Expected expected = Linear(sections, address);
      const VisibleRanges::Range* range = visible.Find(address);
      INFO("round " << round << " address " << address);
      REQUIRE(static_cast<bool>(range) == expected.mapped);
      if (!range) continue;
      CHECK(range->id == expected.section);
      CHECK(range->end == expected.end);
    }
  }
}

TEST_CASE("A lookup after an Add sees the new section", "[visible_ranges]") {
  VisibleRanges visible;
  visible.Add(0x1000, 0x100, 0);
  REQUIRE(visible.Find(0x1080));
  CHECK(visible.Find(0x1080)->id == 0);
  visible.Add(0x1080, 0x10, 1);  // after a lookup made the array
  REQUIRE(visible.Find(0x1080));
  CHECK(visible.Find(0x1080)->id == 1);
  CHECK(visible.Find(0x107f)->end == 0x1080);
  CHECK(visible.Find(0x1090)->id == 0);
  // A copy and a move answer as the original.
  VisibleRanges copy = visible;
  VisibleRanges moved = std::move(copy);
  REQUIRE(moved.Find(0x1088));
  CHECK(moved.Find(0x1088)->id == 1);
  CHECK(moved.size() == visible.size());
}

TEST_CASE("The first lookups may come from several threads at once", "[visible_ranges]") {
  for (int round = 0; round < 20; ++round) {
    VisibleRanges visible;
    for (uint64_t i = 0; i < 2000; ++i) visible.Add(0x10000 + i * 0x100, 0x80, i);
    std::vector<std::thread> threads;
    std::vector<int> wrong(4, 0);
    for (size_t t = 0; t < wrong.size(); ++t)
      threads.emplace_back([&, t] {
        for (uint64_t i = 0; i < 2000; ++i) {
          const VisibleRanges::Range* range = visible.Find(0x10000 + i * 0x100 + 0x10);
          if (!range || range->id != i || visible.Find(0x10000 + i * 0x100 + 0x90)) ++wrong[t];
        }
      });
    for (std::thread& thread : threads) thread.join();
    for (int count : wrong) CHECK(count == 0);
  }
}
