#include "sideband/perf/perf_data.h"

#include <cstdio>
#include <sstream>

#include <catch2/catch.hpp>

#include <fmt/format.h>

#include "sideband/file_bytes.h"
#include "sideband/perf/perf_abi.h"
#include "sideband/perf/perf_test_bytes.h"

using namespace ptprof;
using namespace ptprof::perf;
using namespace ptprof::perf::testing;

namespace {

std::string Testdata(const std::string& path) { return std::string(SHARED_TESTDATA) + "/" + path; }

bool Present(const std::string& path) {
  if (ReadFileRange(path, 0, 0)) return true;
  WARN("SKIP: " << path << " is absent");
  return false;
}

uint64_t Count(const PerfData& d, uint32_t type) {
  auto it = d.record_counts.find(type);
  return it == d.record_counts.end() ? 0 : it->second;
}

}  // namespace

TEST_CASE("a small made-up perf.data: streams, sideband order, counts, bad records") {
  const uint64_t st = kSampleTid | kSampleTime | kSampleCpu;
  Bytes comm;  // time 300 on cpu 1
  comm.U32(7).U32(7).Str("prog", 8).U32(7).U32(7).U64(300).U32(1).U32(0);
  Bytes itrace;  // time 200
  itrace.U32(7).U32(7).U32(7).U32(7).U64(200).U32(1).U32(0);
  Bytes aux;
  aux.U64(0).U64(8).U64(kAuxFlagTruncated).U32(7).U32(7).U64(250).U32(1).U32(0);
  Bytes bad;  // an EXIT too short for its fields (the trailer fits)
  bad.U32(1).U64(400).U32(1).U32(0).U32(7).U32(7);
  Bytes rebuilt;  // two 8-byte AUXTRACE buffers on cpu 1, then a bad EXIT and an unknown type
  rebuilt.Append(Record(kRecordComm, 0, comm.data)).Append(Record(kRecordItraceStart, 0, itrace.data));
  rebuilt.Append(Record(kRecordAux, 0, aux.data));
  for (uint64_t i = 0; i < 2; ++i) {
    Bytes at;
    at.U64(8).U64(i * 8).U64(0).U32(1).U32(0xffffffff).U32(1).U32(0);
    rebuilt.Append(Record(kRecordAuxtrace, 0, at.data)).U64(0x1111111111111111ULL * (i + 1));
  }
  rebuilt.Append(Record(kRecordExit, 0, bad.data)).Append(Record(250, 0, {}));
  auto file = FileMode({Attr(1, 9, st, true), {1}, rebuilt.data, {}});
  auto d = ParsePerfData(file, "made-up.data");
  REQUIRE(d);
  CHECK(d->records == 7);
  CHECK(d->unknown_records == 1);
  CHECK(d->bad_records == 1);
  REQUIRE(d->problems.size() == 1);
  CHECK(d->problems[0].find("made-up.data: offset 0x") == 0);
  CHECK(Count(*d, kRecordAuxtrace) == 2);
  REQUIRE(d->aux_streams.size() == 1);
  const AuxStream& s = d->aux_streams[0];
  CHECK(s.name == "cpu1");
  CHECK(s.bytes == 16);
  auto bytes = d->StreamBytes(s);
  REQUIRE(bytes.size() == 16);
  CHECK(bytes[0] == 0x11);
  CHECK(bytes[8] == 0x22);
  CHECK(d->aux_truncated == 1);
  REQUIRE(d->sideband.size() == 2);
  CHECK(d->sideband[0].header.type == kRecordItraceStart);  // time 200 before time 300
  CHECK(*d->first_time == 200);
  CHECK(*d->last_time == 300);
  CHECK(d->cpus == std::vector<uint32_t>{1});
}

TEST_CASE("perf.data.intel_pt-4.14: record counts agree with perf report -D, AUX streams with aux-extracted") {
  std::string path = Testdata("perf_data_converter/src/quipper/testdata/perf.data.intel_pt-4.14");
  if (!Present(path)) return;
  auto d = ReadPerfData(path);
  REQUIRE(d);
  // perf 6.1 `perf report -D` "Aggregated stats".
  CHECK(d->records == 257);
  CHECK(Count(*d, kRecordMmap) == 56);
  CHECK(Count(*d, kRecordComm) == 3);
  CHECK(Count(*d, kRecordExit) == 1);
  CHECK(Count(*d, kRecordSample) == 15);
  CHECK(Count(*d, kRecordMmap2) == 10);
  CHECK(Count(*d, kRecordAux) == 10);
  CHECK(Count(*d, kRecordItraceStart) == 2);
  CHECK(Count(*d, kRecordSwitchCpuWide) == 152);
  CHECK(Count(*d, kRecordFinishedRound) == 4);
  CHECK(Count(*d, kRecordAuxtraceInfo) == 1);
  CHECK(Count(*d, kRecordAuxtrace) == 2);
  CHECK(Count(*d, kRecordTimeConv) == 1);
  CHECK(d->bad_records == 0);
  CHECK(d->problems.empty());
  REQUIRE(d->intel_pt);
  CHECK(d->intel_pt->max_non_turbo_ratio == 12);
  CHECK(d->features.cpuid == "GenuineIntel,6,78,3");
  const PerfAttr* pt = d->AuxAttr();
  REQUIRE(pt);
  CHECK(pt->attr.config == 0x300e601);
  CHECK(pt->name == "intel_pt//");
  REQUIRE(!d->sideband.empty());
  const PerfAttr* itrace_attr = nullptr;
  for (const auto& r : d->sideband)
    if (r.header.type == kRecordItraceStart) itrace_attr = d->AttrOf(r.sample_id);
  REQUIRE(itrace_attr);
  CHECK(itrace_attr->name == "intel_pt//");
  REQUIRE(d->aux_streams.size() == 2);
  for (const char* name : {"cpu0", "cpu3"}) {
    const AuxStream* s = d->FindStream(name);
    REQUIRE(s);
    std::string idx = std::string(name).substr(3);
    auto expected = ReadFileBytes(Testdata("perf_data_converter/aux-extracted/perf.data.intel_pt-4.14.idx" + idx +
                                           ".cpu" + idx + ".bin"));
    if (!expected) continue;
    CHECK(d->StreamBytes(*s) == *expected);
  }
}

TEST_CASE("the other real perf.data files parse") {
  struct Case {
    const char* path;
    uint64_t records, samples;
  };
  // Counts from perf 6.1 `perf report -D` (minus the ATTR events perf synthesizes for cs_etm).
  for (const Case& c : {Case{"perf_data_converter/src/quipper/testdata/perf.data.branch-4.14", 50, 13},
                        Case{"simpleperf/testdata/etm/perf_etm.data", 70, 0},
                        Case{"simpleperf/testdata/etm/perf_with_missing_aux_data.data", 156, 0},
                        Case{"simpleperf/testdata/etm/perf_with_unformatted_trace.data", 141, 0},
                        Case{"autofdo/testdata/test.lbr", 9269, 9232},
                        Case{"autofdo/testdata/ro_sample.perf", 24, 13}}) {
    std::string path = Testdata(c.path);
    if (!Present(path)) continue;
    PerfDataOptions options;
    options.keep_samples = true;
    auto d = ReadPerfData(path, options);
    INFO(c.path);
    REQUIRE(d);
    CHECK(d->records == c.records);
    CHECK(d->sample_count == c.samples);
    CHECK(d->bad_records == 0);
    CHECK(d->problems.empty());
  }
  auto lbr = ReadPerfData(Testdata("autofdo/testdata/test.lbr"), PerfDataOptions{true});
  if (lbr) {
    REQUIRE(!lbr->samples.empty());
    CHECK(lbr->samples[0].branch_stack.size() == 16);
  }
  auto etm = ReadPerfData(Testdata("simpleperf/testdata/etm/perf_etm.data"));
  if (etm) {
    REQUIRE(etm->cs_etm);
    CHECK(etm->cs_etm->cpus.size() == 8);
    REQUIRE(etm->aux_streams.size() == 1);
    CHECK(etm->aux_streams[0].bytes == 384);
  }
  auto missing = ReadPerfData(Testdata("simpleperf/testdata/etm/perf_with_missing_aux_data.data"));
  if (missing) {
    CHECK(missing->aux_streams.empty());
    CHECK(missing->aux_notices.size() == 6);
  }
  auto raw = ReadPerfData(Testdata("simpleperf/testdata/etm/perf_with_unformatted_trace.data"));
  if (raw) CHECK(raw->aux_pmu_flags == kAuxFlagCoreSightRaw);
}

TEST_CASE("per-thread streams are named by tid; snapshot mode marks them") {
  Bytes r;
  Bytes info;  // intel_pt AUXTRACE_INFO with snapshot_mode set
  info.U32(1).U32(0);
  for (uint64_t w : {6, 31, 1, 0, 1, 0x400, 0x800, 0, 1, 0, 0x200, 0x3c000, 100, 2, 2, 12, 0}) info.U64(w);
  r.Append(Record(kRecordAuxtraceInfo, 0, info.data));
  for (uint32_t tid : {1234u, 1235u}) {
    Bytes at;
    at.U64(8).U64(0).U64(0).U32(tid - 1234).U32(tid).U32(0xffffffff).U32(0);
    r.Append(Record(kRecordAuxtrace, 0, at.data)).U64(tid);
  }
  auto d = ParsePerfData(FileMode({Attr(6, 0x300e601, kSampleTime, false), {1}, r.data, {}}), "threads.data");
  REQUIRE(d);
  REQUIRE(d->aux_streams.size() == 2);
  CHECK(d->aux_streams[0].name == "tid1234");
  CHECK(d->aux_streams[1].name == "tid1235");
  CHECK_FALSE(d->aux_streams[0].cpu);
  CHECK(d->aux_streams[0].snapshot);
  REQUIRE(d->intel_pt);
  CHECK(d->intel_pt->snapshot_mode);
  CHECK(d->PmuName(d->attrs[0].attr) == "intel_pt");  // from AUXTRACE_INFO when pmu_mappings is absent
  CHECK(d->AuxAttr() == &d->attrs[0]);
  CHECK(d->cpus.empty());
}

TEST_CASE("a file whose header was never finalised (data size 0) is read to its end") {
  Bytes r;
  Bytes itrace;
  itrace.U32(1).U32(2);
  r.Append(Record(kRecordItraceStart, 0, itrace.data)).Append(Record(kRecordItraceStart, 0, itrace.data));
  auto file = FileMode({Attr(1, 9, 0, false), {1}, r.data, {}});
  // Zero the data size (offset 48) as perf leaves it when it is killed before writing the header.
  for (int i = 48; i < 56; ++i) file[static_cast<size_t>(i)] = 0;
  auto d = ParsePerfData(file, "killed.data");
  REQUIRE(d);
  CHECK(d->records == 2);
  REQUIRE(d->problems.size() == 1);
  CHECK(d->problems[0].find("data size 0") != std::string::npos);
}

TEST_CASE("test.lbr: every sample's ip and branch stack equal perf script's (-F ip,brstack)") {
  std::string path = Testdata("autofdo/testdata/test.lbr");
  std::string reference = Testdata("autofdo/reference-linux-perf-6.1/test.lbr.script-ip-brstack.txt.xz");
  if (!Present(path) || !Present(reference)) return;
  FILE* pipe = popen(("xz -dc '" + reference + "' 2>/dev/null").c_str(), "r");
  REQUIRE(pipe);
  std::string expected;
  char buf[65536];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) expected.append(buf, n);
  pclose(pipe);
  if (expected.empty()) {
    WARN("SKIP: xz could not read " << reference);
    return;
  }
  auto d = ReadPerfData(path, PerfDataOptions{true});
  REQUIRE(d);
  // perf prints " ip from/to/P|M|-/in_tx/abort/cycles/  ..." per sample; compare ip, from, to, P/M.
  std::istringstream lines(expected);
  std::string line;
  size_t index = 0, mismatches = 0;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string ip, entry;
    words >> ip;
    std::string want = ip, got;
    while (words >> entry) {
      size_t a = entry.find('/'), b = entry.find('/', a + 1), c = entry.find('/', b + 1);
      want += " " + entry.substr(0, c);
    }
    if (index < d->samples.size()) {
      const PerfSample& s = d->samples[index];
      got = fmt::format("{:x}", s.ip.value_or(0));
      for (const auto& e : s.branch_stack)
        got += fmt::format(" {:#x}/{:#x}/{}", e.from, e.to, e.mispredicted() ? "M" : e.predicted() ? "P" : "-");
    }
    if (got != want && mismatches++ < 3) CHECK(got == want);
    ++index;
  }
  CHECK(index == d->samples.size());
  CHECK(index == 9232);
  CHECK(mismatches == 0);
}

// AutoFDO's test says 0x7fedfd0306a0 in pid 902132 is "offset 0x16a0" (foo+0x60): that is the ELF
// address. The mapping (perf script agrees: 0x7fedfd030000, pgoff 0) puts it at file offset 0x6a0,
// which the executable PT_LOAD (file 0x580 -> address 0x1580) places at address 0x16a0.
TEST_CASE("ro_sample.perf: the MMAP2 sideband maps 0x7fedfd0306a0 of pid 902132 to file offset 0x6a0") {
  std::string path = Testdata("autofdo/testdata/ro_sample.perf");
  if (!Present(path)) return;
  auto d = ReadPerfData(path);
  REQUIRE(d);
  const uint64_t address = 0x7fedfd0306a0;
  const MmapRecord* hit = nullptr;
  for (const auto& r : d->sideband)
    if (const auto* m = std::get_if<MmapRecord>(&r.body))
      if (m->pid == 902132 && m->executable && address >= m->addr && address < m->addr + m->len) hit = m;
  REQUIRE(hit);
  CHECK(hit->filename.find("libro_sample.so") != std::string::npos);
  CHECK(hit->addr == 0x7fedfd030000);
  CHECK(address - hit->addr + hit->pgoff == 0x6a0);
}
