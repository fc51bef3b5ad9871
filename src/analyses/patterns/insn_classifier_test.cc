#include "src/analyses/patterns/insn_classifier.h"

#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>

#include "sideband/image_testing.h"
#include "src/analyses/patterns/pattern_parser.h"

using namespace ptprof;
using namespace ptprof::patterns;

TEST_CASE("instructions are classified by length and atoms, from the images or from given bytes") {
  // pushfq ; pop rax ; cli ; pause
  std::vector<uint8_t> code = {0x9c, 0x58, 0xfa, 0xf3, 0x90};
  ImageSet images = testing::ImageWith(code, 0x1000);
  auto cli = ParsePattern("c", "cli");
  auto pause = ParsePattern("p", "pause");
  REQUIRE(cli);
  REQUIRE(pause);
  auto matcher = PatternMatcher::Compile({*cli, *pause});
  REQUIRE(matcher);
  InsnClassifier classifier(images, *matcher);
  CHECK(classifier.At(0x1000, ExecMode::k64Bit).length == 1);
  CHECK(classifier.At(0x1000, ExecMode::k64Bit).atoms == 0);
  CHECK(classifier.At(0x1002, ExecMode::k64Bit).atoms == 1);
  CHECK(classifier.At(0x1003, ExecMode::k64Bit).atoms == 2);
  CHECK(classifier.At(0x1003, ExecMode::k64Bit).length == 2);
  CHECK(classifier.decoded() == 5);
  CHECK(classifier.disassembled() == 3);  // pushfq is only length-decoded: no pattern names it
  CHECK(classifier.At(0x2000, ExecMode::k64Bit).length == 0);
  CHECK(classifier.decoded() == 5);  // nothing there
  CHECK(classifier.Describe(0x1001, ExecMode::k64Bit) == "pop rax");

  // The same bytes given directly; the length stops at what is given.
  CHECK(classifier.Classify(0x9000, code.data() + 2, 1, ExecMode::k64Bit).atoms == 1);
  CHECK(classifier.Classify(0x9000, code.data() + 3, 1, ExecMode::k64Bit).length == 0);  // pause cut short
  CHECK(classifier.Classify(0x9000, code.data() + 3, 2, ExecMode::k64Bit).length == 2);
  CHECK(classifier.Classify(0x9000, code.data(), 0, ExecMode::k64Bit).length == 0);
}
