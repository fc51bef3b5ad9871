#include "sideband/perf/perf_sample.h"

#include <catch2/catch.hpp>

#include "sideband/perf/perf_abi.h"
#include "sideband/perf/perf_test_bytes.h"

using namespace ptprof::perf;
using namespace ptprof::perf::testing;

TEST_CASE("samples decode in sample_type order, with callchain and branch stack") {
  auto attr = *ParseEventAttr(Attr(0, 0, kSampleIp | kSampleTid | kSampleTime | kSampleCpu | kSamplePeriod |
                                              kSampleCallchain | kSampleBranchStack | kSampleIdentifier,
                                   true, kBranchHwIndex),
                              0);
  Bytes b;
  b.U64(7).U64(0x401000).U32(100).U32(101).U64(5000).U32(2).U32(0).U64(500000);
  b.U64(2).U64(0xaaa).U64(0xbbb);               // callchain
  b.U64(2).U64(3);                              // branch stack nr, hw_idx
  b.U64(0x10).U64(0x20).U64(1 | (7u << 4));     // mispredicted, 7 cycles
  b.U64(0x30).U64(0x40).U64(2);
  auto s = ParseSample(b.data, attr, 8);
  REQUIRE(s);
  CHECK(*s->id.id == 7);
  CHECK(*s->ip == 0x401000);
  CHECK(*s->id.pid == 100);
  CHECK(*s->id.tid == 101);
  CHECK(*s->id.time == 5000);
  CHECK(*s->id.cpu == 2);
  CHECK(*s->period == 500000);
  CHECK(s->callchain == std::vector<uint64_t>{0xaaa, 0xbbb});
  CHECK(*s->branch_hw_index == 3);
  REQUIRE(s->branch_stack.size() == 2);
  CHECK(s->branch_stack[0].mispredicted());
  CHECK(s->branch_stack[0].cycles() == 7);
  CHECK(s->branch_stack[1].predicted());
  CHECK(s->branch_stack[1].to == 0x40);
}

TEST_CASE("absurd counts in a sample are refused before anything is allocated") {
  auto attr = *ParseEventAttr(Attr(0, 0, kSampleCallchain, false), 0);
  Bytes b;
  b.U64(uint64_t{1} << 60).U64(1);
  auto s = ParseSample(b.data, attr, 0x40);
  REQUIRE_FALSE(s);
  CHECK(s.error().message.find("callchain") != std::string::npos);
  CHECK(s.error().message.find("offset 0x") == 0);
  auto branches = *ParseEventAttr(Attr(0, 0, kSampleBranchStack, false), 0);
  CHECK_FALSE(ParseSample(b.data, branches, 0));
}

TEST_CASE("sample_id trailers sit at the end of the body") {
  auto attr = *ParseEventAttr(Attr(0, 0, kSampleTid | kSampleTime | kSampleCpu | kSampleIdentifier, true), 0);
  CHECK(SampleIdTrailerSize(attr) == 32);
  Bytes b;
  b.U64(0xdead).U32(1).U32(2).U64(300).U32(3).U32(0).U64(44);
  auto id = ParseSampleIdTrailer(b.data, attr, 0);
  REQUIRE(id);
  CHECK(*id->pid == 1);
  CHECK(*id->time == 300);
  CHECK(*id->cpu == 3);
  CHECK(*id->id == 44);
  CHECK_FALSE(ParseSampleIdTrailer(std::span<const uint8_t>(b.data).first(16), attr, 0));
  auto no_trailer = *ParseEventAttr(Attr(0, 0, kSampleTid, false), 0);
  CHECK(SampleIdTrailerSize(no_trailer) == 0);
}
