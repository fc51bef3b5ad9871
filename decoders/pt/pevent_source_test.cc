#include "decoders/pt/pevent_source.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "decoders/pt/pevent_test_records.h"

using namespace ptprof;
using namespace ptprof::pt;
using namespace ptprof::pt::testing;

TEST_CASE("a sideband file's records come with their offsets and trace times") {
  const auto bytes = Concat({Mmap(1, 0x1000, 0x10, 0, "a.bin", {1, 5}), ItraceStart(1, {1, 7})});
  PeventSource source = SourceOf(bytes, perf::kSampleTid | perf::kSampleTime, "f.sb");
  REQUIRE(source.size() == 2);
  CHECK(source.filename() == "f.sb");
  const PeventEntry& mmap = source.current();
  CHECK(mmap.offset == 0);
  CHECK(mmap.has_time);
  CHECK(mmap.tsc == 5);
  CHECK(*mmap.record.sample_id.pid == 1);
  CHECK(std::get<perf::MmapRecord>(mmap.record.body).filename == "a.bin");
  source.Advance();
  CHECK(source.current().offset == bytes.size() - ItraceStart(1, {1, 7}).size());
  CHECK(source.current().tsc == 7);
  source.Advance();
  CHECK(source.done());
}

TEST_CASE("perf time becomes trace time with time-zero, -shift and -mult, then tsc-offset") {
  PeventConfig config;
  config.clock = perf::PerfClock{1, 3, 100};  // tsc = ((time - 100) << 1) / 3
  CHECK(PeventTsc(100 + 300, config) == 200);
  config.tsc_offset = 50;
  CHECK(PeventTsc(100 + 300, config) == 150);
  config.tsc_offset = 500;  // never below 0
  CHECK(PeventTsc(100 + 300, config) == 0);
  config.tsc_offset = static_cast<uint64_t>(-10);  // a negative offset applies records later
  CHECK(PeventTsc(100 + 300, config) == 210);
}

TEST_CASE("records without a time sample apply at once") {
  PeventSource source = SourceOf(Mmap(1, 0x1000, 0x10, 0, "a.bin", {std::nullopt, 9}), 0);
  // With sample type 0 the trailer is not read: the record's last word is part of the name field.
  CHECK_FALSE(source.current().has_time);
  CHECK(source.current().tsc == 0);
}

TEST_CASE("record types libipt's reader does not know carry no samples") {
  Bytes body;
  body.U64(42).U64(3);  // e.g. a PERF_RECORD_READ-shaped body, then the time trailer
  const auto record = perf::testing::Record(perf::kRecordRead, 0, body.data);
  PeventSource source = SourceOf(record, perf::kSampleTime);
  CHECK_FALSE(source.current().has_time);
  CHECK_FALSE(source.current().record.sample_id.time);
}

TEST_CASE("a truncated sideband file fails naming the file and the record's offset") {
  auto bytes = Concat({Mmap(1, 0x1000, 0x10, 0, "a.bin", {1, 5}), ItraceStart(1, {1, 7})});
  bytes.resize(bytes.size() - 4);
  PeventFile file;
  file.config.sample_type = perf::kSampleTid | perf::kSampleTime;
  auto source = PeventSource::FromBytes(bytes, "cut.sb", file);
  REQUIRE_FALSE(source);
  const std::string offset = fmt::format("offset {:#x}", Mmap(1, 0x1000, 0x10, 0, "a.bin", {1, 5}).size());
  CHECK(source.error().message.find("cut.sb: " + offset) == 0);
  CHECK_FALSE(PeventSource::FromBytes({}, "empty.sb", file));
}
