#include "sideband/perf/perf_record.h"

#include <filesystem>
#include <regex>

#include <catch2/catch.hpp>

#include "sideband/file_bytes.h"
#include "sideband/perf/perf_abi.h"
#include "sideband/perf/perf_test_bytes.h"

using namespace ptprof;
using namespace ptprof::perf;
using namespace ptprof::perf::testing;

namespace {
AttrSet TimeAttrs() {
  AttrSet set;
  set.Add({*ParseEventAttr(Attr(1, 9, kSampleTid | kSampleTime, true), 0), {1}, ""});
  return set;
}
Result<PerfRecord> Decode(uint32_t type, uint16_t misc, const std::vector<uint8_t>& body, const AttrSet& attrs) {
  return DecodeRecord(RecordHeader{type, misc, static_cast<uint16_t>(8 + body.size())}, body, 0x100, attrs);
}
}  // namespace

TEST_CASE("kernel records decode with their sample_id trailer") {
  AttrSet attrs = TimeAttrs();
  Bytes mmap2;
  mmap2.U32(10).U32(11).U64(0x400000).U64(0x1000).U64(0).U32(8).U32(1).U64(77).U64(0).U32(5).U32(2);
  mmap2.Str("/bin/true", 16).U32(10).U32(11).U64(999);
  auto r = Decode(kRecordMmap2, 0, mmap2.data, attrs);
  REQUIRE(r);
  const auto& m = std::get<MmapRecord>(r->body);
  CHECK(m.mmap2);
  CHECK(m.addr == 0x400000);
  CHECK(m.ino == 77);
  CHECK(m.executable);
  CHECK(m.filename == "/bin/true");
  CHECK(*r->sample_id.time == 999);

  Bytes comm;
  comm.U32(10).U32(10).Str("hello", 8).U32(10).U32(10).U64(1000);
  auto c = Decode(kRecordComm, kMiscCommExec, comm.data, attrs);
  REQUIRE(c);
  CHECK(std::get<CommRecord>(c->body).comm == "hello");
  CHECK(std::get<CommRecord>(c->body).exec);

  Bytes aux;
  aux.U64(0x1000).U64(0x200).U64(kAuxFlagTruncated | kAuxFlagPartial).U32(1).U32(1).U64(5);
  auto a = Decode(kRecordAux, 0, aux.data, attrs);
  REQUIRE(a);
  CHECK(std::get<AuxRecord>(a->body).aux_size == 0x200);
  CHECK(std::get<AuxRecord>(a->body).flags == 5);

  Bytes sw;
  sw.U32(42).U32(43).U32(1).U32(1).U64(7);
  auto s = Decode(kRecordSwitchCpuWide, kMiscSwitchOut | kMiscSwitchOutPreempt, sw.data, attrs);
  REQUIRE(s);
  CHECK(std::get<SwitchRecord>(s->body).out);
  CHECK(std::get<SwitchRecord>(s->body).preempt);
  CHECK(std::get<SwitchRecord>(s->body).next_prev_tid == 43);

  Bytes hw_id;  // AUX_OUTPUT_HW_ID: cs_etm's trace ID 0x2a (version 0.1 in bits 32+)
  hw_id.U64(0x000001000000002aULL).U32(1).U32(1).U64(1234);
  auto h = Decode(kRecordAuxOutputHwId, 0, hw_id.data, attrs);
  REQUIRE(h);
  CHECK(std::get<AuxOutputHwIdRecord>(h->body).hw_id == 0x000001000000002aULL);
  CHECK(*h->sample_id.time == 1234);
  CHECK_FALSE(Decode(kRecordAuxOutputHwId, 0, std::vector<uint8_t>(4, 0), attrs));

  Bytes unknown;
  unknown.U64(1);
  auto u = Decode(200, 0, unknown.data, attrs);
  REQUIRE(u);
  CHECK(std::holds_alternative<OtherRecord>(u->body));
}

TEST_CASE("a record too short for its type is an error naming offset and field") {
  AttrSet none;
  Bytes b;
  b.U32(1);
  auto r = Decode(kRecordItraceStart, 0, b.data, none);
  REQUIRE_FALSE(r);
  CHECK(r.error().message.find("offset 0x100") == 0);
  CHECK(r.error().message.find("ITRACE_START") != std::string::npos);
  auto t = Decode(kRecordMmap, 0, b.data, TimeAttrs());  // shorter than its trailer
  CHECK_FALSE(t);
}

TEST_CASE("AUXTRACE records locate their payload") {
  AttrSet none;
  Bytes b;
  b.U64(0x80).U64(0x1000).U64(0xabc).U32(3).U32(0xffffffff).U32(3).U32(0);
  auto r = Decode(kRecordAuxtrace, 0, b.data, none);
  REQUIRE(r);
  const auto& at = std::get<AuxtraceRecord>(r->body);
  CHECK(at.size == 0x80);
  CHECK(at.cpu == 3);
  CHECK(at.payload_offset == 0x100 + 48);
}

TEST_CASE("bare perf_event buffers (libipt pevent sideband) decode with one attr") {
  PerfEventAttr attr;
  attr.sample_type = kSampleTime;
  attr.flags = 1u << 18;
  Bytes buf;
  Bytes itrace;
  itrace.U32(5).U32(6).U64(100);
  buf.Append(Record(kRecordItraceStart, 0, itrace.data));
  Bytes exit;
  exit.U32(5).U32(1).U32(6).U32(1).U64(200).U64(200);
  buf.Append(Record(kRecordExit, 0, exit.data));
  auto records = ParsePerfEventBuffer(buf.data, attr, "test.sb");
  REQUIRE(records);
  REQUIRE(records->size() == 2);
  CHECK(*(*records)[0].sample_id.time == 100);
  CHECK(std::get<TaskRecord>((*records)[1].body).pid == 5);
  buf.data.resize(buf.data.size() - 3);
  auto cut = ParsePerfEventBuffer(buf.data, attr, "test.sb");
  REQUIRE_FALSE(cut);
  CHECK(cut.error().message.find("test.sb: offset 0x18") == 0);
}

TEST_CASE("DynamoRIO's pevent sideband files decode") {
  std::string dir = std::string(SHARED_TESTDATA) + "/dynamorio/clients/drcachesim/drpt2trace/test_simple.raw/";
  auto primary = ReadFileBytes(dir + "primary.sideband.pevent");
  if (!primary) {
    WARN("SKIP: " << dir << " is absent");
    return;
  }
  PerfEventAttr attr;  // their layout: TID|TIME|CPU|IDENTIFIER trailers
  attr.sample_type = kSampleTid | kSampleTime | kSampleCpu | kSampleIdentifier;
  attr.flags = 1u << 18;
  auto records = ParsePerfEventBuffer(*primary, attr, "primary.sideband.pevent");
  REQUIRE(records);
  REQUIRE(!records->empty());
  CHECK((*records)[0].header.type == kRecordSwitch);
  CHECK(*(*records)[0].sample_id.cpu == 9);
  bool saw_comm = false;
  for (const auto& r : *records)
    if (const auto* c = std::get_if<CommRecord>(&r.body)) saw_comm |= c->comm == "hello";
  CHECK(saw_comm);
  auto secondary = ReadFileBytes(dir + "secondary.sideband.pevent");
  REQUIRE(secondary);
  CHECK(ParsePerfEventBuffer(*secondary, attr, "secondary.sideband.pevent"));
}

TEST_CASE("libipt's pevent sideband test files decode with the sample-type in their names") {
  std::filesystem::path dir = std::string(SHARED_TESTDATA) + "/libipt/generated";
  if (!std::filesystem::is_directory(dir)) {
    WARN("SKIP: " << dir << " is absent");
    return;
  }
  std::regex sample_type_re("sample-type=(0x[0-9a-f]+)");
  int files = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    std::string name = entry.path().filename().string();
    std::smatch m;
    if (entry.path().extension() != ".sb" || !std::regex_search(name, m, sample_type_re)) continue;
    PerfEventAttr attr;
    attr.sample_type = std::stoull(m[1].str(), nullptr, 16);
    attr.flags = 1u << 18;
    auto bytes = ReadFileBytes(entry.path().string());
    REQUIRE(bytes);
    INFO(name);
    auto records = ParsePerfEventBuffer(*bytes, attr, name);
    CHECK(records);
    ++files;
  }
  CHECK(files > 0);
}
