#include "decoders/pt/pevent_record_text.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "decoders/pt/pevent_test_records.h"

using namespace ptprof;
using namespace ptprof::pt;
using namespace ptprof::pt::testing;

namespace {

SidebandPrintFlags Flags(bool compact, bool verbose, bool filename, bool offset, bool time) {
  SidebandPrintFlags f;
  f.compact = compact;
  f.verbose = verbose;
  f.filename = filename;
  f.offset = offset;
  f.time = time;
  return f;
}

}  // namespace

TEST_CASE("compact records: libipt-sb's fields and the sample braces") {
  const uint64_t tid_time = perf::kSampleTid | perf::kSampleTime;
  PeventSource source = SourceOf(Concat({Mmap(1, 0xa000, 1, 0, "x.bin", {1, 0}), CommExec(2, "bar", {2, 3}),
                                         Switch(true, {1, 2})}),
                                 tid_time, "f.sb");
  const auto compact = Flags(true, false, false, true, false);
  CHECK(PeventRecordText(source.current(), "f.sb", tid_time, compact) ==
        "0000000000000000  PERF_RECORD_MMAP  1/1, a000, 1, 0, x.bin  { 1/1 0 }\n");
  const uint64_t second = source.current().record.header.size;
  source.Advance();
  CHECK(PeventRecordText(source.current(), "f.sb", tid_time, Flags(true, false, true, true, true)) ==
        fmt::format("f.sb:{:016x}  0000000000000003  PERF_RECORD_COMM.EXEC  2/2, bar  {{ 2/2 3 }}\n", second));
  source.Advance();
  CHECK(PeventRecordText(source.current(), "f.sb", tid_time, Flags(true, false, false, false, false)) ==
        "PERF_RECORD_SWITCH.OUT  { 1/1 2 }\n");
}

TEST_CASE("verbose records list one field per line, then the samples") {
  PeventSource source = SourceOf(Aux(0xb000, 0x700, 1, {std::nullopt, 4}), perf::kSampleTime);
  CHECK(PeventRecordText(source.current(), "f", perf::kSampleTime, Flags(false, true, false, false, false)) ==
        "PERF_RECORD_AUX.TRUNCATED\n  aux offset: b000\n  aux size: 700\n  flags: 1\n  time: 4\n");
}

TEST_CASE("no sample type, no braces; nothing asked, nothing printed") {
  PeventSource source = SourceOf(Lost(3, 8, {std::nullopt, 0}), 0);
  CHECK(PeventRecordText(source.current(), "f", 0, Flags(true, false, false, false, false)) ==
        "PERF_RECORD_LOST  3, 8\n");
  CHECK(PeventRecordText(source.current(), "f", 0, SidebandPrintFlags{}).empty());
}

TEST_CASE("unknown records show type and misc") {
  Bytes body;
  body.U64(1);
  PeventSource source = SourceOf(perf::testing::Record(perf::kRecordRead, 5, body.data), perf::kSampleTime);
  CHECK(PeventRecordText(source.current(), "f", perf::kSampleTime, Flags(true, false, false, false, false)) ==
        "UNKNOWN (8, 5)  { }\n");
}

TEST_CASE("ptdump lists the records due by each time, then the rest") {
  std::vector<PeventSource> sources;
  sources.push_back(SourceOf(Concat({Lost(1, 1, {std::nullopt, 1}), Lost(1, 2, {std::nullopt, 9})}),
                             perf::kSampleTime));
  PeventQueue queue(std::move(sources));
  std::string out;
  auto emit = [&out](std::string_view text) { out += text; };
  PrintDueRecords(queue, 5, Flags(true, false, false, false, false), emit);
  CHECK(out == "PERF_RECORD_LOST  1, 1  { 1 }\n");
  PrintDueRecords(queue, UINT64_MAX, Flags(true, false, false, false, false), emit);
  CHECK(out == "PERF_RECORD_LOST  1, 1  { 1 }\nPERF_RECORD_LOST  1, 2  { 9 }\n");
}
