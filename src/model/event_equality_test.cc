#include "src/model/event_equality.h"

#include <catch2/catch.hpp>

using namespace ptprof;

TEST_CASE("SameEvent compares the header and every body field", "[event_equality]") {
  ExecBlock block;
  block.first_ip = 0x1000;
  block.last_ip = 0x1005;
  block.insns = 3;
  block.end = BlockEnd::kCall;
  TraceEvent a{EventHeader{}, block};
  a.header.offset = 0x40;
  a.header.tsc = 7;
  TraceEvent b = a;
  CHECK(SameEvent(a, b));

  std::get<ExecBlock>(b.body).end = BlockEnd::kJump;
  CHECK_FALSE(SameEvent(a, b));
  b = a;
  b.header.offset = 0x41;
  CHECK_FALSE(SameEvent(a, b));
  b = a;
  b.header.tsc = 8;
  CHECK_FALSE(SameEvent(a, b));
}

TEST_CASE("SameEvent tells different kinds and strings apart", "[event_equality]") {
  TraceGap gap;
  gap.detail = "overflow";
  TraceEvent a{EventHeader{}, gap};
  TraceEvent b = a;
  CHECK(SameEvent(a, b));
  std::get<TraceGap>(b.body).detail = "other";
  CHECK_FALSE(SameEvent(a, b));
  TraceEvent toggle{EventHeader{}, TraceToggle{}};
  CHECK_FALSE(SameEvent(a, toggle));

  Instruction insn;
  insn.size = 1;
  insn.bytes[0] = 0x90;
  TraceEvent c{EventHeader{}, insn};
  TraceEvent d = c;
  CHECK(SameEvent(c, d));
  std::get<Instruction>(d.body).bytes[0] = 0xc3;
  CHECK_FALSE(SameEvent(c, d));
}
