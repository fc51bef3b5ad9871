#include "src/pipeline/session_perf_data.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "sideband/perf/perf_abi.h"
#include "src/pipeline/session_tasks.h"

using namespace ptprof;

namespace {

const char kSampleBuildId[] = "46643ff0cf62ee72a7fca059aae56acf3bd7867d";

std::string Sample(const std::string& name) {
  const char* root = std::getenv("SOURCE_ROOT");
  return std::filesystem::absolute(std::string(root ? root : "..") + "/traces/sample/" + name)
      .lexically_normal()
      .string();
}

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "perf-session-XXXXXX").string();
    path_ = mkdtemp(pattern.data()) ? pattern : std::string();
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A perf.data as the reader would summarise a per-CPU intel_pt recording on a Skylake.
perf::PerfData SkylakeData() {
  perf::PerfData data;
  data.name = "perf.data";
  data.features.cpuid = "GenuineIntel,6,78,3";
  perf::PerfAttr attr;
  attr.attr.type = 8;
  attr.attr.config = 0x300e601;  // mtc, mtc_period=3, tsc, ...
  data.attrs.push_back(attr);
  perf::IntelPtInfo info;
  info.pmu_type = 8;
  info.max_non_turbo_ratio = 12;
  info.tsc_ctc_ratio_n = 100;
  info.tsc_ctc_ratio_d = 2;
  data.intel_pt = info;
  return data;
}

perf::PerfRecord Mmap(const std::string& file, uint64_t addr, uint64_t pgoff) {
  perf::MmapRecord mmap;
  mmap.pid = mmap.tid = 42;
  mmap.addr = addr;
  mmap.len = 0x1000;
  mmap.pgoff = pgoff;
  mmap.filename = file;
  perf::PerfRecord record;
  record.header.type = perf::kRecordMmap;
  record.body = mmap;
  return record;
}

}  // namespace

TEST_CASE("PT parameters come from the cpuid feature, the event config and AUXTRACE_INFO") {
  std::vector<std::string> notes;
  pt::PtParams params = PtParamsFromPerfData(SkylakeData(), &notes);
  REQUIRE(params.cpu);
  CHECK(params.cpu->family == 6);
  CHECK(params.cpu->model == 78);
  CHECK(params.cpu->stepping == 3);
  CHECK(params.mtc_freq == 3);
  CHECK(params.nom_freq == 12);
  CHECK(params.cpuid_0x15_eax == 2);
  CHECK(params.cpuid_0x15_ebx == 100);
  CHECK(notes.empty());

  perf::PerfData other = SkylakeData();
  other.features.cpuid = "AuthenticAMD,23,1,2";
  other.attrs[0].attr.config = 0;  // no mtc
  other.intel_pt->filter = "filter main @ /bin/ls";
  params = PtParamsFromPerfData(other, &notes);
  CHECK_FALSE(params.cpu);
  CHECK(params.mtc_freq == 0);
  REQUIRE(notes.size() == 1);
  CHECK(notes[0].find("filter main @ /bin/ls") != std::string::npos);
}

TEST_CASE("binaries are found under --symfs, in a build-id cache, or at their path") {
  const std::string sample = Sample("sample");
  CHECK(FindBinary(sample, kSampleBuildId, "", "") == sample);
  CHECK(FindBinary(sample, "", "", "") == sample);
  CHECK(FindBinary(sample, "00112233", "", "").empty());  // another build
  CHECK(FindBinary("/no/such/file", kSampleBuildId, "", "").empty());

  TempDir cache;
  const std::string id = kSampleBuildId;
  auto dir = std::filesystem::path(cache.path()) / ".build-id" / id.substr(0, 2) / id.substr(2);
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(sample, dir / "elf");
  CHECK(FindBinary("/recorded/elsewhere", id, "", cache.path()) == (dir / "elf").string());

  TempDir root;
  auto under = std::filesystem::path(root.path()) / "usr/bin";
  std::filesystem::create_directories(under);
  std::filesystem::copy_file(sample, under / "tool");
  CHECK(FindBinary("/usr/bin/tool", id, root.path(), "") == (under / "tool").string());
  // With --symfs the recorded path itself is not used.
  CHECK(FindBinary(sample, id, root.path(), "").empty());
}

TEST_CASE("a perf.data session: a stream per AUX stream, images found, missing ones once each") {
  perf::PerfData data = SkylakeData();
  data.bytes = SharedBytes(std::vector<uint8_t>{0x02, 0x82, 0x02, 0x82, 0xaa, 0xbb});
  perf::AuxStream cpu0{"cpu0", 0, 0u, std::nullopt, false, {{0, 0, 4, 0, 0}}, 4};
  perf::AuxStream cpu3{"cpu3", 3, 3u, std::nullopt, false, {{0, 4, 2, 0, 0}}, 2};
  data.aux_streams = {cpu0, cpu3};
  data.sideband.push_back(Mmap(Sample("sample"), 0x401000, 0x1000));
  data.sideband.push_back(Mmap("/lib/missing.so", 0x7f0000001000, 0x1000));
  data.sideband.push_back(Mmap("/lib/missing.so", 0x7f0000101000, 0x1000));
  auto session = SessionFromPerfData(std::move(data), "perf.data", RawInputOptions{});
  REQUIRE(session);
  REQUIRE(session->manifest.streams.size() == 2);
  CHECK(session->manifest.streams[1].name == "cpu3");
  CHECK(session->manifest.streams[1].cpu == 3);
  CHECK(session->stream_bytes[0] == std::vector<uint8_t>{0x02, 0x82, 0x02, 0x82});
  CHECK(session->stream_bytes[1] == std::vector<uint8_t>{0xaa, 0xbb});
  CHECK(session->params().mtc_freq == 3);
  REQUIRE(session->manifest.images.size() == 1);
  CHECK(session->manifest.images[0].build_id == kSampleBuildId);
  CHECK(session->manifest.images[0].base == 0x400000);
  CHECK_FALSE(session->images.sections().empty());
  REQUIRE(session->warnings.size() == 1);
  CHECK(session->warnings[0].find("/lib/missing.so") != std::string::npos);

  auto selected = SelectStreams(*session, {"cpu3"});
  REQUIRE(selected);
  CHECK(*selected == std::vector<size_t>{1});
  CHECK(SelectStreams(*session, {})->size() == 2);
  auto unknown = SelectStreams(*session, {"cpu9"});
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error().message == "perf.data: --stream cpu9: no such trace stream (there are: "
                                   "cpu0, cpu3)");
}

TEST_CASE("a perf.data without intel_pt data is an error naming the file") {
  perf::PerfData data = SkylakeData();
  auto session = SessionFromPerfData(data, "perf.data", RawInputOptions{});
  REQUIRE_FALSE(session);
  CHECK(session.error().message.find("perf.data: no AUXTRACE data") == 0);
  data.intel_pt.reset();
  CHECK(SessionFromPerfData(data, "perf.data", RawInputOptions{}).error().message ==
        "perf.data: AUXTRACE_INFO: no intel_pt trace in this perf.data");
}

TEST_CASE("the intel_pt perf.data of the shared test data opens with its parameters") {
  const std::string path = std::string(SHARED_TESTDATA) +
                           "/perf_data_converter/src/quipper/testdata/perf.data.intel_pt-4.14";
  if (!std::filesystem::exists(path)) {
    WARN("shared test data absent: " << path);
    return;
  }
  auto session = OpenSession(path, RawInputOptions{}, false);
  REQUIRE(session);
  CHECK(session->kind == InputKind::kPerfData);
  auto selected = SelectStreams(*session, {"cpu0", "cpu3"});
  REQUIRE(selected);
  CHECK(selected->size() == 2);
  CHECK(session->params().cpu->model == 78);
  CHECK(session->params().mtc_freq == 3);
  CHECK(session->params().nom_freq == 12);
  CHECK(session->params().cpuid_0x15_ebx == 100);
}

TEST_CASE("the tasks of the shared intel_pt perf.data follow its switch records") {
  const std::string path = std::string(SHARED_TESTDATA) +
                           "/perf_data_converter/src/quipper/testdata/perf.data.intel_pt-4.14";
  if (!std::filesystem::exists(path)) {
    WARN("shared test data absent: " << path);
    return;
  }
  auto session = OpenSession(path, RawInputOptions{}, false);
  REQUIRE(session);
  REQUIRE(session->tasks);
  const TaskSchedule& schedule = session->tasks->schedule;
  // perf report -D, cpu 3: ITRACE_START 3174 at 641256844131; OUT (next 1760) at 641257181481,
  // IN 1760 at 641257184778; OUT (next 3174) at 641257194938, IN 3174 at 641257198178.
  CHECK(schedule.At(3, 641256844131) == Task{3174, 3174});
  CHECK(schedule.At(3, 641257183000) == Task{3174, 3174});  // switching out: still 3174's path
  CHECK(schedule.At(3, 641257184778) == Task{1760, 1760});
  CHECK(schedule.At(3, 641257197713) == Task{1760, 1760});
  CHECK(schedule.At(3, 641257198178) == Task{3174, 3174});
  CHECK(schedule.PidOf(3174) == 3174);
}

TEST_CASE("--kcore: the kernel's code and symbols from a kcore_dir, in every address space") {
  const std::string path = std::string(SHARED_TESTDATA) +
                           "/perf_data_converter/src/quipper/testdata/perf.data.intel_pt-4.14";
  if (!std::filesystem::exists(path)) {
    WARN("shared test data absent: " << path);
    return;
  }
  // A stand-in kcore_dir: any ELF with loadable segments as kcore, a kallsyms naming its code.
  TempDir dir;
  std::filesystem::copy_file(Sample("sample"), dir.path() + "/kcore");
  {
    std::ofstream kallsyms(dir.path() + "/kallsyms");
    kallsyms << "ffffffff81000000 T kernel_entry\nffffffff81000010 t kernel_helper\n";
  }
  RawInputOptions options;
  options.kcore_dir = dir.path();
  auto session = OpenSession(path, options, false);
  REQUIRE(session);
  REQUIRE(session->tasks);
  const auto kernel = session->tasks->spaces.MappingsOf(AddressSpaces::kKernelOnly);
  REQUIRE(kernel.size() == 1);
  CHECK(session->images.Symbolize(0xffffffff81000012) == "kernel_helper+0x2");
  for (const std::string& warning : session->warnings)
    CHECK(warning.find("[kernel.kallsyms]") == std::string::npos);  // kcore stands for the kernel
  uint8_t byte = 0;
  CHECK(session->images.Read(0x401000, &byte, 1) == 1);

  options.kcore_dir = dir.path() + "/missing";
  auto missing = OpenSession(path, options, false);
  REQUIRE_FALSE(missing);
  CHECK(missing.error().message.find("--kcore") != std::string::npos);
}
