#include "src/pipeline/input_kind.h"

#include <algorithm>

#include <catch2/catch.hpp>

using namespace ptprof;

TEST_CASE("inputs are classified by content") {
  std::vector<uint8_t> psb;
  for (int i = 0; i < 8; ++i) psb.insert(psb.end(), {0x02, 0x82});
  CHECK(ClassifyBytes(psb) == InputKind::kRawPt);
  std::vector<uint8_t> padded(116, 0);
  std::copy(psb.begin(), psb.end(), padded.begin() + 100);
  CHECK(ClassifyBytes(padded) == InputKind::kRawPt);
  std::vector<uint8_t> perf = {'P', 'E', 'R', 'F', 'I', 'L', 'E', '2', 104, 0, 0, 0, 0, 0, 0, 0};
  CHECK(ClassifyBytes(perf) == InputKind::kPerfData);
  perf[8] = 16;
  CHECK(ClassifyBytes(perf) == InputKind::kPerfDataPipe);
  CHECK(ClassifyBytes({0x7f, 'E', 'L', 'F'}) == InputKind::kElf);
  CHECK(ClassifyBytes({1, 2, 3}) == InputKind::kUnknown);
  CHECK(ClassifyBytes({}) == InputKind::kUnknown);
}

TEST_CASE("a missing path is an error naming it") {
  auto r = ClassifyPath("/nonexistent/trace.pt");
  REQUIRE(!r);
  CHECK(r.error().message.rfind("/nonexistent/trace.pt", 0) == 0);
}
