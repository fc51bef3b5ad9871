#include "sideband/perf/perf_decompress.h"

#include <zstd.h>

#include <catch2/catch.hpp>

#include "sideband/perf/perf_abi.h"
#include "sideband/perf/perf_test_bytes.h"

using namespace ptprof::perf;
using namespace ptprof::perf::testing;

namespace {
std::vector<uint8_t> Compress(const std::vector<uint8_t>& bytes) {
  std::vector<uint8_t> out(ZSTD_compressBound(bytes.size()));
  size_t n = ZSTD_compress(out.data(), out.size(), bytes.data(), bytes.size(), 3);
  REQUIRE_FALSE(ZSTD_isError(n));
  out.resize(n);
  return out;
}
}  // namespace

TEST_CASE("compressed records decompress, and a record may continue in the next payload") {
  Bytes records;
  Bytes itrace;
  itrace.U32(1).U32(2);
  records.Append(Record(kRecordItraceStart, 0, itrace.data));
  Bytes lost;
  lost.U64(3).U64(4);
  records.Append(Record(kRecordLost, 0, lost.data));
  // Split in the middle of the second record.
  std::vector<uint8_t> first(records.data.begin(), records.data.begin() + 20);
  std::vector<uint8_t> second(records.data.begin() + 20, records.data.end());
  RecordDecompressor d;
  auto a = d.Add(Compress(first), 0x100);
  REQUIRE(a);
  REQUIRE(a->size() == 1);
  CHECK((*a)[0].header.type == kRecordItraceStart);
  CHECK((*a)[0].body.size() == 8);
  CHECK(d.pending() == 4);
  auto b = d.Add(Compress(second), 0x200);
  REQUIRE(b);
  REQUIRE(b->size() == 1);
  CHECK((*b)[0].header.type == kRecordLost);
  CHECK(d.pending() == 0);
}

TEST_CASE("bad compressed data is an error; expansion is bounded") {
  RecordDecompressor d;
  std::vector<uint8_t> garbage = {1, 2, 3, 4, 5, 6, 7, 8};
  auto r = d.Add(garbage, 0x40);
  REQUIRE_FALSE(r);
  CHECK(r.error().message.find("offset 0x40") == 0);
  std::vector<uint8_t> zeros(1 << 20);  // compresses to a few bytes, expands to 1 MiB
  RecordDecompressor small(4096);
  auto big = small.Add(Compress(zeros), 0x80);
  REQUIRE_FALSE(big);
  CHECK(big.error().message.find("expand past 4096") != std::string::npos);
  Bytes zero_size;
  zero_size.U32(1).U16(0).U16(0);
  RecordDecompressor z;
  CHECK_FALSE(z.Add(Compress(zero_size.data), 0));
}
