#include "sideband/perf/perf_data_writer.h"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <variant>

#include <catch2/catch.hpp>

#include "sideband/perf/perf_abi.h"
#include "sideband/perf/perf_data.h"

using namespace ptprof;
using namespace ptprof::perf;

namespace {

PerfDataDescription Sample(const std::vector<uint8_t>& trace) {
  PerfDataDescription d;
  using Bits = IntelPtConfigBits;
  d.config = (uint64_t{1} << Bits::kTsc) | (uint64_t{1} << Bits::kBranch) | (uint64_t{3} << Bits::kMtcPeriod);
  d.pt_info.pmu_type = kExportIntelPtPmuType;
  d.pt_info.time_mult = 1;
  d.pt_info.cap_user_time_zero = true;
  d.pt_info.tsc_bit = uint64_t{1} << Bits::kTsc;
  d.pt_info.tsc_ctc_ratio_n = 2;
  d.pt_info.tsc_ctc_ratio_d = 1;
  d.pt_info.max_non_turbo_ratio = 24;
  d.pt_info.filter = "filter main @ /bin/prog";
  d.start_time = 100;
  d.end_time = 200;
  d.threads.push_back({1000, 1001, 0, "prog", {{0x401000, 0x2000, 0x1000, "/bin/prog"}}});
  d.buffers.push_back({0, 1001, 0, trace});
  d.build_ids.push_back({-1, 2, "00112233445566778899aabbccddeeff00112233", "/bin/prog"});
  d.cpuid = "GenuineIntel,6,85,4";
  d.cmdline = {"ptprof", "export"};
  return d;
}

uint64_t Count(const PerfData& d, uint32_t type) {
  auto it = d.record_counts.find(type);
  return it == d.record_counts.end() ? 0 : it->second;
}

}  // namespace

TEST_CASE("an exported perf.data reads back: attr, AUXTRACE_INFO, records, stream bytes, features") {
  const std::vector<uint8_t> trace = {0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02};
  auto bytes = SerializePerfData(Sample(trace));
  REQUIRE(bytes);
  auto read = ParsePerfData(*bytes, "export.data");
  REQUIRE(read);
  CHECK(read->bad_records == 0);
  CHECK(read->problems.empty());
  CHECK(read->features.problems.empty());

  REQUIRE(read->attrs.size() == 1);
  const PerfAttr& attr = read->attrs[0];
  CHECK(attr.attr.type == kExportIntelPtPmuType);
  CHECK(attr.attr.size == 128);
  CHECK(attr.attr.sample_id_all());
  CHECK(attr.attr.sample_type == (kSampleIp | kSampleTid | kSampleTime | kSampleCpu | kSampleIdentifier));
  CHECK(attr.ids == std::vector<uint64_t>{1});
  CHECK(attr.name == "intel_pt//");
  CHECK(read->PmuName(attr.attr) == "intel_pt");
  const auto fields = DecodeIntelPtConfig(attr.attr.config);
  CHECK(std::find(fields.begin(), fields.end(), std::pair<std::string, uint64_t>{"tsc", 1}) != fields.end());
  CHECK(std::find(fields.begin(), fields.end(), std::pair<std::string, uint64_t>{"mtc_period", 3}) != fields.end());

  REQUIRE(read->intel_pt);
  CHECK(read->intel_pt->pmu_type == kExportIntelPtPmuType);
  CHECK(read->intel_pt->time_mult == 1);
  CHECK(read->intel_pt->tsc_ctc_ratio_n == 2);
  CHECK(read->intel_pt->max_non_turbo_ratio == 24);
  CHECK(read->intel_pt->filter == "filter main @ /bin/prog");

  CHECK(Count(*read, kRecordComm) == 1);
  CHECK(Count(*read, kRecordMmap2) == 1);
  CHECK(Count(*read, kRecordItraceStart) == 1);
  CHECK(Count(*read, kRecordAux) == 1);
  CHECK(Count(*read, kRecordAuxtrace) == 1);
  CHECK(Count(*read, kRecordExit) == 1);
  CHECK(Count(*read, kRecordFinishedRound) == 3);
  REQUIRE(read->aux_streams.size() == 1);
  std::vector<uint8_t> padded = trace;
  padded.resize(16, 0);
  CHECK(read->StreamBytes(read->aux_streams[0]) == padded);
  CHECK(read->first_time == 100u);
  CHECK(read->last_time == 200u);

  bool saw_mmap = false;
  for (const PerfRecord& r : read->sideband) {
    if (const auto* m = std::get_if<MmapRecord>(&r.body)) {
      saw_mmap = true;
      CHECK(m->mmap2);
      CHECK(m->pid == 1000);
      CHECK(m->tid == 1001);
      CHECK(m->addr == 0x401000);
      CHECK(m->len == 0x2000);
      CHECK(m->pgoff == 0x1000);
      CHECK(m->executable);
      CHECK(m->filename == "/bin/prog");
    }
  }
  CHECK(saw_mmap);

  const PerfFeatures& f = read->features;
  CHECK(f.cpuid == "GenuineIntel,6,85,4");
  CHECK(f.arch == "x86_64");
  CHECK(f.nr_cpus_online == 1u);
  CHECK(f.pmu_mappings.at(kExportIntelPtPmuType) == "intel_pt");
  CHECK(f.cmdline == std::vector<std::string>{"ptprof", "export"});
  REQUIRE(f.build_ids.size() == 1);
  CHECK(f.build_ids[0].build_id == "00112233445566778899aabbccddeeff00112233");
  CHECK(f.build_ids[0].filename == "/bin/prog");
  REQUIRE(f.auxtrace_index.size() == 1);
  CHECK(f.auxtrace_index[0].file_offset == read->aux_streams[0].buffers[0].record_offset);
}

TEST_CASE("a buffer of a thread without sideband is refused; the file is never half-written") {
  std::vector<uint8_t> trace(8, 0);
  PerfDataDescription d = Sample(trace);
  d.buffers[0].tid = 5;
  auto bytes = SerializePerfData(d);
  REQUIRE_FALSE(bytes);
  CHECK(bytes.error().message.find("thread 5") != std::string::npos);

  const auto dir = std::filesystem::temp_directory_path() / "ptprof_perf_writer_test";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "out.data").string();
  std::filesystem::remove(path);
  CHECK_FALSE(WritePerfDataFile(d, path, false));
  CHECK_FALSE(std::filesystem::exists(path));
  REQUIRE(WritePerfDataFile(Sample(trace), path, false));
  auto again = WritePerfDataFile(Sample(trace), path, false);
  REQUIRE_FALSE(again);
  CHECK(again.error().message == path + ": already exists (use --force to replace it)");
  CHECK(WritePerfDataFile(Sample(trace), path, true));
  CHECK(ReadPerfData(path));
  size_t leftovers = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) leftovers += entry.path() != path;
  CHECK(leftovers == 0);
  std::filesystem::remove_all(dir);
}

TEST_CASE("a cs_etm perf.data reads back: attr with the sink, per-CPU trace unit registers") {
  const std::vector<uint8_t> trace(64, 0xff);
  PerfDataDescription d = Sample(trace);
  d.auxtrace_type = kAuxtraceCsEtm;
  d.config = (uint64_t{1} << 14) | (uint64_t{1} << 28);  // contextid, timestamp
  d.config2 = 0x74b1ff0e;
  d.etm_info.header_version = 1;
  d.etm_info.pmu_type = 9;
  d.etm_info.snapshot = true;
  for (uint64_t n = 0; n < 2; ++n) {
    CsEtmCpu cpu;
    cpu.kind = n ? CsEtmCpu::Kind::kEte : CsEtmCpu::Kind::kEtmV4;
    cpu.magic = n ? 0x5050505050505050ULL : 0x4040404040404040ULL;
    cpu.cpu = n;
    cpu.params = {{"TRCCONFIGR", 0x840}, {"TRCTRACEIDR", 0x10 + 2 * n}, {"TRCIDR0", 0x28000ea1},
                  {"TRCIDR1", 0x4100f400}, {"TRCIDR2", 0x488}, {"TRCIDR8", 0},
                  {"TRCAUTHSTATUS", 0xcc}};
    if (n) cpu.params.emplace_back("TRCDEVARCH", 0x47705a13);
    cpu.params.emplace_back("TS_SOURCE", 1);
    d.etm_info.cpus.push_back(cpu);
  }
  d.etm_info.nr_cpus = 2;
  d.arch = "aarch64";
  auto bytes = SerializePerfData(d);
  REQUIRE(bytes);
  auto read = ParsePerfData(*bytes, "etm.data");
  REQUIRE(read);
  CHECK(read->problems.empty());
  REQUIRE(read->attrs.size() == 1);
  CHECK(read->attrs[0].attr.type == 9);
  CHECK(read->attrs[0].attr.config == d.config);
  CHECK(read->attrs[0].attr.config2 == 0x74b1ff0e);
  CHECK(read->attrs[0].name == "cs_etm//");
  CHECK(read->features.pmu_mappings.at(9) == "cs_etm");
  REQUIRE(read->cs_etm);
  const CsEtmInfo* info = &*read->cs_etm;
  CHECK(info->header_version == 1);
  CHECK(info->pmu_type == 9);
  CHECK(info->nr_cpus == 2);
  CHECK(info->snapshot);
  REQUIRE(info->cpus.size() == 2);
  for (size_t n = 0; n < 2; ++n) {
    CHECK(info->cpus[n].kind == d.etm_info.cpus[n].kind);
    CHECK(info->cpus[n].cpu == n);
    CHECK(info->cpus[n].params == d.etm_info.cpus[n].params);
  }
  REQUIRE(read->aux_streams.size() == 1);
  CHECK(read->StreamBytes(read->aux_streams[0]) == trace);
}

TEST_CASE("the kernel's sideband records are carried with this file's event id") {
  const std::vector<uint8_t> trace = {0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82};
  PerfDataDescription d = Sample(trace);
  auto record = [&](uint32_t type, uint16_t misc, std::vector<uint32_t> body_words, uint64_t time) {
    std::vector<uint8_t> r(8);
    auto put = [&](const void* p, size_t n) {
      r.insert(r.end(), static_cast<const uint8_t*>(p), static_cast<const uint8_t*>(p) + n);
    };
    for (uint32_t w : body_words) put(&w, 4);
    const int32_t pid = 1000, tid = 1001, cpu = 0, res = 0;
    const uint64_t identifier = 0xdeadbeef;  // the kernel's id: rewritten
    put(&pid, 4), put(&tid, 4), put(&time, 8), put(&cpu, 4), put(&res, 4), put(&identifier, 8);
    const uint16_t size = static_cast<uint16_t>(r.size());
    std::memcpy(r.data(), &type, 4);
    std::memcpy(r.data() + 4, &misc, 2);
    std::memcpy(r.data() + 6, &size, 2);
    d.kernel_records.insert(d.kernel_records.end(), r.begin(), r.end());
  };
  record(kRecordSwitch, 0, {}, 120);
  record(kRecordSwitch, 0x2000, {}, 150);  // switch out
  record(kRecordFork, 0, {1000, 1000, 1002, 1001, 0, 0}, 160);
  auto bytes = SerializePerfData(d);
  REQUIRE(bytes);
  auto read = ParsePerfData(*bytes, "export.data");
  REQUIRE(read);
  CHECK(read->problems.empty());
  CHECK(read->bad_records == 0);
  CHECK(Count(*read, kRecordSwitch) == 2);
  CHECK(Count(*read, kRecordFork) == 1);
  int switches = 0;
  for (const PerfRecord& r : read->sideband)
    if (const auto* s = std::get_if<SwitchRecord>(&r.body)) {
      ++switches;
      CHECK(r.sample_id.identifier == 1u);
      CHECK(s->out == (switches == 2));
    }
  CHECK(switches == 2);

  d.kernel_records.resize(d.kernel_records.size() - 3);  // the last record cut short
  auto cut = SerializePerfData(d);
  REQUIRE_FALSE(cut);
  CHECK(cut.error().message.find("kernel sideband: offset") != std::string::npos);
}
