#include "src/analyses/delta/block_expander.h"

#include <catch2/catch.hpp>

#include "sideband/image_testing.h"
#include "src/analyses/patterns/pattern_parser.h"

using namespace ptprof;
using namespace ptprof::delta;

TEST_CASE("a block expands into the positions of its instructions with atoms, once") {
  // nop ; cli ; nop ; sti
  ImageSet images = testing::ImageWith({0x90, 0xfa, 0x90, 0xfb}, 0x2000);
  auto pattern = patterns::ParsePattern("p", "cli | sti");
  REQUIRE(pattern);
  auto matcher = patterns::PatternMatcher::Compile({*pattern});
  REQUIRE(matcher);
  patterns::InsnClassifier classifier(images, *matcher);
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
