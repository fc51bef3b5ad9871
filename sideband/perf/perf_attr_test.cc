#include "sideband/perf/perf_attr.h"

#include <catch2/catch.hpp>

#include "sideband/perf/perf_abi.h"
#include "sideband/perf/perf_test_bytes.h"

using namespace ptprof::perf;
using namespace ptprof::perf::testing;

TEST_CASE("attrs of any ABI size decode; missing fields stay 0") {
  auto bytes = Attr(6, 0x300e601, kSampleIp | kSampleTid, true, 0x42);
  auto full = ParseEventAttr(bytes, 0);
  REQUIRE(full);
  CHECK(full->type == 6);
  CHECK(full->config == 0x300e601);
  CHECK(full->sample_id_all());
  CHECK(full->branch_sample_type == 0x42);
  auto oldest = ParseEventAttr(std::span<const uint8_t>(bytes).first(64), 0);
  REQUIRE(oldest);
  CHECK(oldest->branch_sample_type == 0);  // beyond the 64-byte ABI
  auto too_short = ParseEventAttr(std::span<const uint8_t>(bytes).first(40), 0x100);
  REQUIRE_FALSE(too_short);
  CHECK(too_short.error().message.find("offset 0x100") == 0);
}

TEST_CASE("AttrSet finds a record's attr by its identifier") {
  AttrSet set;
  auto a = ParseEventAttr(Attr(0, 0, kSampleIdentifier | kSampleIp, true), 0);
  auto b = ParseEventAttr(Attr(1, 9, kSampleIdentifier | kSampleTime, true), 0);
  set.Add({*a, {10, 11}, "cycles"});
  set.Add({*b, {20}, "dummy"});
  Bytes sample;
  sample.U64(20).U64(1234);  // identifier first in a sample
  CHECK(set.ForSample(sample.data)->name == "dummy");
  Bytes trailer;
  trailer.U64(5).U64(11);  // identifier last in a non-sample record
  CHECK(set.ForNonSample(trailer.data)->name == "cycles");
  Bytes unknown;
  unknown.U64(99);
  CHECK(set.ForSample(unknown.data) == nullptr);
  CHECK(set.ForSample({}) == nullptr);
}
