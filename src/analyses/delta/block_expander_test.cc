#include "src/analyses/delta/block_expander.h"

#include <random>
#include <set>
#include <tuple>
#include <vector>

#include <catch2/catch.hpp>

#include "sideband/image_testing.h"
#include "src/analyses/patterns/pattern_parser.h"

using namespace ptprof;
using namespace ptprof::delta;

namespace {

// The matcher of one pattern, `text`.
patterns::PatternMatcher MatcherOf(const std::string& text) {
  auto pattern = patterns::ParsePattern("p", text);
  REQUIRE(pattern);
  auto matcher = patterns::PatternMatcher::Compile({*pattern});
  REQUIRE(matcher);
  return std::move(*matcher);
}

}  // namespace

TEST_CASE("a block expands into the positions of its instructions with atoms, once") {
  // nop ; cli ; nop ; sti
  ImageSet images = testing::ImageWith({0x90, 0xfa, 0x90, 0xfb}, 0x2000);
  const patterns::PatternMatcher matcher = MatcherOf("cli | sti");
  patterns::InsnClassifier classifier(images, matcher);
  BlockExpander expander(classifier);
  ExecBlock block;
  block.first_ip = 0x2000;
  block.insns = 4;
  block.mode = ExecMode::k64Bit;
  const ExpandedBlock& e = expander.Expand(block);
  CHECK(e.expanded == 4);
  REQUIRE(e.hits.size() == 2);
  CHECK(e.hits[0].index == 1);
  CHECK(e.hits[0].ip == 0x2001);
  CHECK(e.hits[1].index == 3);
  CHECK(classifier.decoded() == 4);
  expander.Expand(block);
  CHECK(classifier.decoded() == 4);

  ExecBlock beyond = block;
  beyond.insns = 6;  // runs past the end of the code
  CHECK(expander.Expand(beyond).expanded == 4);
}

TEST_CASE("the expander's table grows with the distinct blocks and keeps every block") {
  // 40 K bytes of nop, with a cli every 16 bytes: blocks of 1 to 4 instructions from each byte.
  std::vector<uint8_t> code(40000, 0x90);
  for (size_t i = 0; i < code.size(); i += 16) code[i] = 0xfa;
  ImageSet images = testing::ImageWith(code, 0x10000);
  const patterns::PatternMatcher matcher = MatcherOf("cli");
  patterns::InsnClassifier classifier(images, matcher);
  BlockExpander expander(classifier);
  const size_t first_slots = expander.table_slots();
  std::vector<const ExpandedBlock*> seen;
  for (int pass = 0; pass < 2; ++pass) {
    size_t n = 0;
    for (uint64_t at = 0; at + 4 <= code.size(); ++at) {
      const uint32_t insns = static_cast<uint32_t>(1 + at % 4);
      const BlockExpander::Seen& entry = expander.Find(0x10000 + at, insns, ExecMode::k64Bit);
      REQUIRE(entry.block);
      CHECK(entry.ip == 0x10000 + at);
      CHECK(entry.insns == insns);
      // Its hits: the cli bytes among its instructions (each one byte long).
      size_t clis = 0;
      for (uint64_t i = at; i < at + insns; ++i) clis += i % 16 == 0;
      CHECK(entry.block->hits.size() == clis);
      CHECK(entry.plain == (clis == 0));
      if (pass == 0) {
        seen.push_back(entry.block);
      } else {
        CHECK(entry.block == seen[n]);  // the same block, not expanded again
      }
      ++n;
    }
    if (pass == 0) CHECK(expander.table_slots() > first_slots);
  }
  // Each distinct block's instructions classified once, on the first pass.
  uint64_t instructions = 0;
  for (uint64_t at = 0; at + 4 <= code.size(); ++at) instructions += 1 + at % 4;
  CHECK(classifier.decoded() == instructions);
}

namespace {

// The idle matches `seen` gives, as (ip, index, first, second).
std::vector<std::tuple<uint64_t, uint32_t, int, int>> IdleMatchesOf(
    const BlockExpander::Seen& seen) {
  std::vector<std::tuple<uint64_t, uint32_t, int, int>> matches;
  seen.EachIdleMatch([&](uint64_t ip, uint32_t index, int first, int second) {
    matches.emplace_back(ip, index, first, second);
  });
  return matches;
}

}  // namespace

TEST_CASE("a settled block keeps its one idle match in its entry, when it fits") {
  ExpandedBlock block;
  block.hits = {{2, 0x1004, 1}, {5, 0x100a, 2}};
  block.expanded = 6;
  block.idle = IdleOutcome::kSettled;
  block.idle_matches = {{1, {-1, 3}}};
  BlockExpander::Seen seen;
  seen.ip = 0x1000;
  seen.insns = 6;
  seen.block = &block;
  seen.Settle();
  CHECK(seen.idle == IdleOutcome::kSettled);
  CHECK(seen.one_match);
  const auto one = IdleMatchesOf(seen);
  CHECK(one == decltype(one){{0x100a, 5, -1, 3}});

  // The same matches from the block itself when they are two, or one that does not fit.
  block.idle_matches = {{0, {0, -1}}, {1, {-1, 0}}};
  seen.Settle();
  CHECK_FALSE(seen.one_match);
  const auto two = IdleMatchesOf(seen);
  CHECK(two == decltype(two){{0x1004, 2, 0, -1}, {0x100a, 5, -1, 0}});
  block.idle_matches = {{1, {200, -1}}};  // an alternative past int8_t
  seen.Settle();
  CHECK_FALSE(seen.one_match);
  const auto far = IdleMatchesOf(seen);
  CHECK(far == decltype(far){{0x100a, 5, 200, -1}});
  block.hits[1].index = 70000;  // an index past uint16_t
  block.idle_matches = {{1, {0, 0}}};
  seen.Settle();
  CHECK_FALSE(seen.one_match);
  const auto late = IdleMatchesOf(seen);
  CHECK(late == decltype(late){{0x100a, 70000, 0, 0}});

  // Not settled: nothing kept, whatever the block's matches.
  block.idle = IdleOutcome::kUnsettled;
  seen.Settle();
  CHECK(seen.idle == IdleOutcome::kUnsettled);
  CHECK_FALSE(seen.one_match);
}

TEST_CASE("blocks looked up again and again move home and every block stays found") {
  // 3 K blocks of one to four nops at scattered addresses, so that some sit past their home
  // slots, where lookups then swap them home.
  std::vector<uint8_t> code(1 << 20, 0x90);
  ImageSet images = testing::ImageWith(code, 0x400000);
  const patterns::PatternMatcher matcher = MatcherOf("cli");
  patterns::InsnClassifier classifier(images, matcher);
  BlockExpander expander(classifier);
  std::mt19937_64 random(7);
  std::set<uint64_t> taken;
  std::vector<uint64_t> ips;
  while (ips.size() < 3000)
    if (const uint64_t ip = 0x400000 + random() % (code.size() - 4); taken.insert(ip).second)
      ips.push_back(ip);
  auto insns_of = [](uint64_t ip) { return static_cast<uint32_t>(1 + ip % 4); };
  std::vector<const ExpandedBlock*> first;
  for (uint64_t ip : ips) first.push_back(expander.Find(ip, insns_of(ip), ExecMode::k64Bit).block);
  const uint64_t decoded = classifier.decoded();
  // Hot blocks (every seventh) 40 times a pass, the others once, in an order that moves on.
  for (size_t pass = 0; pass < 20; ++pass) {
    for (size_t n = 0; n < ips.size(); ++n) {
      const size_t k = (n * 37 + pass) % ips.size();
      for (int again = 0; again < (k % 7 == 0 ? 40 : 1); ++again) {
        const BlockExpander::Seen& entry =
            expander.Find(ips[k], insns_of(ips[k]), ExecMode::k64Bit);
        REQUIRE(entry.block == first[k]);
        REQUIRE(entry.ip == ips[k]);
        REQUIRE(entry.insns == insns_of(ips[k]));
        REQUIRE(entry.plain);
      }
    }
  }
  CHECK(classifier.decoded() == decoded);  // none added again
}
