#include "decoders/pt/psb_segments.h"

#include <algorithm>
#include <random>

#include <catch2/catch.hpp>

using namespace ptprof::pt;

namespace {
void AppendPsb(std::vector<uint8_t>& bytes) {
  for (int i = 0; i < 8; ++i) {
    bytes.push_back(0x02);
    bytes.push_back(0x82);
  }
}
}  // namespace

TEST_CASE("FindPsbOffsets finds each PSB pattern once", "[psb_segments]") {
  std::vector<uint8_t> bytes = {0x00, 0x02, 0x03};
  AppendPsb(bytes);                 // at 3
  bytes.push_back(0x02);            // a lone 02 is no PSB
  AppendPsb(bytes);                 // at 20
  bytes.insert(bytes.end(), {0x02, 0x82, 0x02});  // cut short
  CHECK(FindPsbOffsets(bytes) == std::vector<uint64_t>{3, 20});
  CHECK(FindPsbOffsets(std::vector<uint8_t>{}).empty());
}

TEST_CASE("PlanSegments cuts at PSBs with two more after them", "[psb_segments]") {
  const std::vector<uint64_t> psbs = {0, 100, 200, 300, 400, 500, 600, 700};
  auto segments = PlanSegments(psbs, 800, 150);
  REQUIRE(segments.size() == 3);
  CHECK(segments[0].begin == 0);
  CHECK(segments[0].cut == 200);
  CHECK(segments[0].trust_end == 300);
  CHECK(segments[0].end == 400);
  CHECK_FALSE(segments[0].last());
  CHECK(segments[1].begin == 200);
  CHECK(segments[1].cut == 400);
  CHECK(segments[1].trust_end == 500);
  CHECK(segments[1].end == 600);
  // 600 has only one PSB after it: the rest is the last segment.
  CHECK(segments[2].begin == 400);
  CHECK(segments[2].last());
  CHECK(segments[2].end == 800);
}

TEST_CASE("PlanSegments keeps a trace with too few PSBs whole", "[psb_segments]") {
  auto segments = PlanSegments({0, 100}, 300, 10);
  REQUIRE(segments.size() == 1);
  CHECK(segments[0].begin == 0);
  CHECK(segments[0].last());
}

TEST_CASE("PlanSegments tapers the last segments for several threads", "[psb_segments]") {
  // A PSB every 10 bytes over 10,000 bytes, segments of 1,000 bytes, two threads.
  std::vector<uint64_t> psbs;
  for (uint64_t at = 0; at < 10000; at += 10) psbs.push_back(at);
  const auto even = PlanSegments(psbs, 10000, 1000);
  const auto tapered = PlanSegments(psbs, 10000, 1000, 2);
  REQUIRE(even.size() == 10);
  REQUIRE(tapered.size() > even.size());
  auto length = [](const TraceSegment& s) { return s.cut - s.begin; };
  // Whole segments while two threads' worth of them is left, then a share of what is left, at
  // least the floor, each ending at the first PSB that far on.
  auto expected = [](uint64_t left) {
    const uint64_t share = left / (kTaperShares * 2);
    const uint64_t bytes = std::min<uint64_t>(1000, std::max<uint64_t>(share, 1000 / kTaperFloor));
    return (bytes + 9) / 10 * 10;
  };
  uint64_t begin = 0;
  for (size_t i = 0; i < tapered.size(); ++i) {
    const TraceSegment& s = tapered[i];
    CHECK(s.begin == begin);
    begin = s.cut;
    if (s.last()) {
      CHECK(i + 1 == tapered.size());
      CHECK(s.end == 10000);
      continue;
    }
    CHECK(length(s) == expected(10000 - s.begin));
    CHECK(s.trust_end == s.cut + 10);
    CHECK(s.end == s.cut + 20);
  }
  CHECK(begin == 10000);
  CHECK(length(tapered.front()) == 1000);
  CHECK(length(tapered[tapered.size() - 2]) == 1000 / kTaperFloor);
  // One thread, or a plan without tapering: the same segments.
  const auto one = PlanSegments(psbs, 10000, 1000, 0);
  REQUIRE(one.size() == even.size());
  for (size_t i = 0; i < one.size(); ++i) CHECK(one[i].cut == even[i].cut);
}

TEST_CASE("FindPsbOffsets finds what a byte-by-byte search finds, at every alignment",
          "[psb_segments]") {
  // The plain search: the first PSB from where it stands, then on after it.
  auto plain = [](const std::vector<uint8_t>& bytes) {
    std::vector<uint8_t> psb;
    AppendPsb(psb);
    std::vector<uint64_t> found;
    for (size_t at = 0; at + psb.size() <= bytes.size();) {
      if (std::equal(psb.begin(), psb.end(), bytes.begin() + at)) {
        found.push_back(at);
        at += psb.size();
      } else {
        ++at;
      }
    }
    return found;
  };
  std::mt19937 random(12);
  for (int round = 0; round < 2000; ++round) {
    std::vector<uint8_t> bytes;
    const int pieces = static_cast<int>(random() % 12);
    for (int i = 0; i < pieces; ++i) {
      switch (random() % 4) {
        case 0: AppendPsb(bytes); break;  // PSBs back to back and at every alignment
        case 1: bytes.push_back(0x02); break;
        case 2: bytes.push_back(0x82); break;
        default:
          for (unsigned n = random() % 9; n; --n) bytes.push_back(static_cast<uint8_t>(random()));
      }
    }
    INFO("round " << round << ", " << bytes.size() << " bytes");
    CHECK(FindPsbOffsets(bytes) == plain(bytes));
  }
}
