#include "decoders/etm/range_expander.h"

#include <catch2/catch.hpp>

#include "decoders/etm/arm_disassembler.h"

using namespace ptprof;
using namespace ptprof::etm;

TEST_CASE("an A64 block expands into its instructions, the last carrying the block's end") {
  // nop; nop; bl +8  (little endian)
  std::vector<uint8_t> code = {0x1f, 0x20, 0x03, 0xd5, 0x1f, 0x20, 0x03, 0xd5, 0x02, 0x00, 0x00, 0x94};
  RangeExpander ex({MemoryImage{0x1000, "", std::make_shared<const std::vector<uint8_t>>(code), "t"}});
  TraceEvent block{EventHeader{}, ExecBlock{0x1000, 0x1008, 3, 4, BlockEnd::kCall, ExecMode::kA64,
                                            false, false, kUnknownTime}};
  std::vector<TraceEvent> out;
  ex.Expand(block, [&](const TraceEvent& e) { out.push_back(e); });
  REQUIRE(out.size() == 3);
  const auto& last = std::get<Instruction>(out[2].body);
  CHECK(last.ip == 0x1008);
  CHECK(last.iclass == BlockEnd::kCall);
  CHECK(std::get<Instruction>(out[0].body).iclass == BlockEnd::kFallThrough);
  ArmDisassembler dis;
  CHECK(dis.Format(std::get<Instruction>(out[0].body)) == "nop");
  CHECK(dis.Format(last) == "bl #0x1010");
}

TEST_CASE("T32 sizes come from the first halfword; missing memory is a gap") {
  CHECK(T32Size(0xf000) == 4);  // bl prefix
  CHECK(T32Size(0x4770) == 2);  // bx lr
  RangeExpander ex({});
  TraceEvent block{EventHeader{}, ExecBlock{0x2000, 0x2004, 2, 2, BlockEnd::kReturn, ExecMode::kT32,
                                            false, false, kUnknownTime}};
  std::vector<TraceEvent> out;
  ex.Expand(block, [&](const TraceEvent& e) { out.push_back(e); });
  REQUIRE(out.size() == 1);
  CHECK(std::get<TraceGap>(out[0].body).reason == GapReason::kNoImage);
}
