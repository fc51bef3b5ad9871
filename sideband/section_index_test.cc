#include "sideband/section_index.h"

#include <random>

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
Expected Linear(const std::vector<SectionIndex::Range>& sections, uint64_t address) {
  for (size_t i = sections.size(); i-- > 0;) {
    const SectionIndex::Range& s = sections[i];
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

TEST_CASE("A later section hides what it covers of an earlier one", "[section_index]") {
  const SectionIndex index({{0x1000, 0x40}, {0x1020, 0x8}, {0x2000, 0}});
  const SectionIndex::Span* span = index.Find(0x101c);
  REQUIRE(span);
  CHECK(span->section == 0);
  CHECK(span->end == 0x1020);  // stops where the later section starts
  span = index.Find(0x1027);
  REQUIRE(span);
  CHECK(span->section == 1);
  CHECK(span->end == 0x1028);
  span = index.Find(0x1028);
  REQUIRE(span);
  CHECK(span->section == 0);  // the earlier one shows again after it
  CHECK(span->end == 0x1040);
  CHECK_FALSE(index.Find(0x1040));
  CHECK_FALSE(index.Find(0xfff));
  CHECK_FALSE(index.Find(0x2000));  // an empty section maps nothing
  CHECK(index.spans().size() == 3);
}

TEST_CASE("An index answers as the sections searched one by one", "[section_index]") {
  std::mt19937_64 random(7);
  for (int round = 0; round < 200; ++round) {
    std::vector<SectionIndex::Range> sections(1 + random() % 12);
    for (auto& s : sections) {
      s.address = 0x1000 + random() % 0x200;
      s.size = random() % 5 == 0 ? 0 : 1 + random() % 0x100;
    }
    const SectionIndex index(sections);
    for (uint64_t address = 0xff0; address < 0x1310; ++address) {
      const Expected expected = Linear(sections, address);
      const SectionIndex::Span* span = index.Find(address);
      INFO("round " << round << " address " << address);
      REQUIRE(static_cast<bool>(span) == expected.mapped);
      if (!span) continue;
      CHECK(span->section == expected.section);
      CHECK(span->end == expected.end);
    }
  }
}
