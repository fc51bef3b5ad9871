#include "src/pipeline/session.h"

#include <cstdlib>
#include <filesystem>
#include <algorithm>
#include <fstream>

#include <catch2/catch.hpp>

#include "sideband/file_bytes.h"
#include "src/archive/archive_reader.h"
#include "src/archive/archive_writer.h"
#include "src/pipeline/session_archive.h"

using namespace ptprof;

namespace {

std::string Sample(const std::string& name) {
  const char* root = std::getenv("SOURCE_ROOT");
  return std::string(root ? root : "..") + "/traces/sample/" + name;
}

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "session-test-XXXXXX").string();
    path_ = mkdtemp(pattern.data()) ? pattern : std::string();
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

RawInputOptions SampleOptions() {
  RawInputOptions options;
  options.images.push_back(ElfImageSpec{Sample("sample"), 0});
  // The same file again as a raw range: stored once, loaded twice.
  options.images.push_back(RawImageSpec{Sample("sample"), 0x1000, 0x40, 0x401000});
  options.params.cpu = pt::PtCpu{6, 85, 4};
  options.params.mtc_freq = 3;
  return options;
}

}  // namespace

TEST_CASE("a raw session describes one stream called raw, its images and parameters") {
  auto session = OpenRawSession(Sample("sample.pt"), SampleOptions());
  REQUIRE(session);
  REQUIRE(session->manifest.streams.size() == 1);
  CHECK(session->manifest.streams[0].name == "raw");
  CHECK(session->stream_bytes[0].size() == std::filesystem::file_size(Sample("sample.pt")));
  REQUIRE(session->manifest.images.size() == 2);
  CHECK(session->manifest.images[0].build_id == "46643ff0cf62ee72a7fca059aae56acf3bd7867d");
  CHECK(session->manifest.images[1].size == 0x40);
  CHECK(session->params().mtc_freq == 3);
}

TEST_CASE("archive round trip: same streams, images, symbols and parameters without the files") {
  TempDir dir;
  // Work on a copy of the program, deleted before the archive is read.
  const std::string copy = dir / "prog";
  std::filesystem::copy_file(Sample("sample"), copy);
  RawInputOptions options = SampleOptions();
  options.images[0] = ElfImageSpec{copy, 0};
  options.images[1] = RawImageSpec{copy, 0x1000, UINT64_MAX, 0x401000};
  auto session = OpenRawSession(Sample("sample.pt"), options);
  REQUIRE(session);
  const std::string out = dir / "x.ptar";
  REQUIRE(WriteSessionArchive(*session, out, {false, "ptprof test"}));
  std::filesystem::remove(copy);

  CHECK(session->stream_bytes[0].mapped());  // a raw trace is mapped, not read

  auto back = OpenArchiveSession(out);
  REQUIRE(back);
  CHECK(back->kind == InputKind::kPtar);
  CHECK(back->stream_bytes == session->stream_bytes);
  CHECK(!back->stream_bytes[0].mapped());  // a small stream is held in memory
  {
    // A large stream is decompressed to a file in the private directory and mapped.
    setenv("PTPROF_MAP_STREAMS_FROM", "1", 1);
    auto mapped = OpenArchiveSession(out);
    unsetenv("PTPROF_MAP_STREAMS_FROM");
    REQUIRE(mapped);
    CHECK(mapped->stream_bytes[0].mapped());
    CHECK(mapped->stream_bytes == session->stream_bytes);
    // Nothing is left behind in the private directory but the images.
    for (const auto& entry : std::filesystem::directory_iterator(mapped->extracted->dir()))
      CHECK(entry.path().filename().string().rfind("stream", 0) != 0);
  }
  CHECK(back->manifest.tool == "ptprof test");
  REQUIRE(back->params().cpu);
  CHECK(back->params().cpu->model == 85);
  CHECK(back->params().mtc_freq == 3);
  REQUIRE(back->images.sections().size() == session->images.sections().size());
  for (size_t i = 0; i < back->images.sections().size(); ++i) {
    CHECK(back->images.sections()[i].address == session->images.sections()[i].address);
    CHECK(back->images.sections()[i].bytes == session->images.sections()[i].bytes);
  }
  CHECK(back->images.Symbolize(0x401000) == session->images.Symbolize(0x401000));
  CHECK(back->manifest.images[0].path == copy);
  // The ELF is one member; the raw range is another (different bytes).
  auto reader = archive::ArchiveReader::Open(out);
  REQUIRE(reader);
  CHECK(reader->members().size() == 3);
  const std::string extracted_dir = back->extracted->dir();
  CHECK(std::filesystem::exists(extracted_dir));
  back = Fail("gone");
  CHECK_FALSE(std::filesystem::exists(extracted_dir));
}

TEST_CASE("an image loaded twice is stored once") {
  TempDir dir;
  RawInputOptions options;
  options.images.push_back(ElfImageSpec{Sample("sample"), 0});
  options.images.push_back(ElfImageSpec{Sample("sample"), 0x800000});
  auto session = OpenRawSession(Sample("sample.pt"), options);
  REQUIRE(session);
  REQUIRE(WriteSessionArchive(*session, dir / "x.ptar", {}));
  auto reader = archive::ArchiveReader::Open(dir / "x.ptar");
  REQUIRE(reader);
  CHECK(reader->members().size() == 2);
  auto back = OpenArchiveSession(dir / "x.ptar");
  REQUIRE(back);
  CHECK(back->manifest.images[1].base == 0x800000);
  CHECK(back->images.sections().size() == session->images.sections().size());
}

TEST_CASE("OpenSession: raw PT, archives without options, other inputs named") {
  TempDir dir;
  auto raw = OpenSession(Sample("sample.pt"), {}, false);
  REQUIRE(raw);
  REQUIRE(WriteSessionArchive(*raw, dir / "x.ptar", {}));
  CHECK(OpenSession(dir / "x.ptar", {}, false));
  auto with_options = OpenSession(dir / "x.ptar", {}, true);
  REQUIRE_FALSE(with_options);
  CHECK(with_options.error().message.find("carries its own images") != std::string::npos);
  auto elf = OpenSession(Sample("sample"), {}, false);
  REQUIRE_FALSE(elf);
  CHECK(elf.error().message == Sample("sample") +
                                   ": offset 0x0: this is ELF, which this command does not read yet");
  auto not_archive = OpenIfArchive(Sample("sample.pt"), false);
  REQUIRE(not_archive);
  CHECK_FALSE(not_archive->has_value());
  auto archived = OpenIfArchive(dir / "x.ptar", false);
  REQUIRE(archived);
  REQUIRE(archived->has_value());
  CHECK((*archived)->stream_bytes.size() == 1);
}

TEST_CASE("a damaged archive session names the member") {
  TempDir dir;
  RawInputOptions options;
  options.images.push_back(ElfImageSpec{Sample("sample"), 0});
  auto session = OpenRawSession(Sample("sample.pt"), options);
  REQUIRE(session);
  REQUIRE(WriteSessionArchive(*session, dir / "x.ptar", {}));
  auto reader = archive::ArchiveReader::Open(dir / "x.ptar");
  REQUIRE(reader);
  const archive::MemberInfo image = reader->members()[1];
  {
    std::fstream file(dir / "x.ptar", std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(static_cast<std::streamoff>(image.offset + image.packed_size / 2));
    file.put('\x5a');
  }
  auto damaged = OpenArchiveSession(dir / "x.ptar");
  REQUIRE_FALSE(damaged);
  CHECK(damaged.error().message.find("member '" + image.name + "'") != std::string::npos);
}

TEST_CASE("a perf.data-like session fits the format: per-CPU streams, shared image member, clock") {
  TempDir dir;
  auto trace = ReadFileBytes(Sample("sample.pt"));
  auto elf = ReadFileBytes(Sample("sample"));
  REQUIRE(trace);
  REQUIRE(elf);
  archive::Manifest m;
  m.source = {"perf_data", {"perf.data"}, "lab"};
  m.clock = archive::ClockEntry{10, 1234, 0};
  m.pt_config["tsc"] = 1;
  m.streams.push_back({"cpu0", "intel_pt", 0, -1, -1, "streams/cpu0.pt"});
  m.streams.push_back({"cpu1", "intel_pt", 1, -1, -1, "streams/cpu1.pt"});
  archive::ImageEntry whole;
  whole.path = "/usr/bin/sample";
  whole.build_id = "46643ff0cf62ee72a7fca059aae56acf3bd7867d";
  whole.size = elf->size();
  whole.pid = 42;
  whole.member = "images/by-build-id/sample";
  m.images.push_back(whole);
  // A second mapping of the same file in another process: bytes 0x1000.. of the same member.
  archive::ImageEntry mapping = whole;
  mapping.kind = archive::ImageEntry::Kind::kRaw;
  mapping.pid = 43;
  mapping.address = 0x7f0000001000;
  mapping.file_offset = 0x1000;
  mapping.member_offset = 0x1000;
  mapping.size = 0x40;
  mapping.time_ns = 1000;
  m.images.push_back(mapping);
  m.sideband.push_back({"perf_records", "sideband", "sideband/perf.records"});
  const std::string path = dir / "perf.ptar";
  auto writer = archive::ArchiveWriter::Create(path, false);
  REQUIRE(writer);
  REQUIRE(writer->Add("streams/cpu0.pt", *trace));
  REQUIRE(writer->Add("streams/cpu1.pt", *trace));
  REQUIRE(writer->Add("images/by-build-id/sample", *elf));
  REQUIRE(writer->Add("sideband/perf.records", std::vector<uint8_t>{1, 2, 3}));
  REQUIRE(writer->Finish(archive::ManifestToJson(m)));

  auto session = OpenArchiveSession(path);
  REQUIRE(session);
  CHECK(session->stream_bytes.size() == 2);
  CHECK(session->stream_bytes[1] == *trace);
  CHECK(session->sideband_bytes[0] == std::vector<uint8_t>{1, 2, 3});
  REQUIRE(session->manifest.clock);
  CHECK(session->manifest.clock->time_mult == 1234);
  uint8_t mapped[4] = {};
  REQUIRE(session->images.Read(0x7f0000001000, mapped, 4) == 4);
  CHECK(std::equal(mapped, mapped + 4, elf->begin() + 0x1000));

  auto for_decode = OpenIfArchive(path, false);  // several streams are decoded, merged by time
  REQUIRE(for_decode);
  REQUIRE(*for_decode);
  CHECK((*for_decode)->stream_bytes.size() == 2);

  // Re-archiving keeps the description (and stores the raw mapping as its own range).
  REQUIRE(WriteSessionArchive(*session, dir / "again.ptar", {}));
  auto again = OpenArchiveSession(dir / "again.ptar");
  REQUIRE(again);
  CHECK(again->manifest.images[1].member_offset == 0);
  REQUIRE(again->images.Read(0x7f0000001000, mapped, 4) == 4);
  CHECK(std::equal(mapped, mapped + 4, elf->begin() + 0x1000));
}

TEST_CASE("raw session errors name the file") {
  RawInputOptions options;
  options.images.push_back(ElfImageSpec{"/nonexistent/prog", 0});
  auto missing_image = OpenRawSession(Sample("sample.pt"), options);
  REQUIRE_FALSE(missing_image);
  CHECK(missing_image.error().message.find("/nonexistent/prog") == 0);
  RawInputOptions kallsyms;
  kallsyms.kallsyms = "/nonexistent/kallsyms";
  auto missing_kallsyms = OpenRawSession(Sample("sample.pt"), kallsyms);
  REQUIRE_FALSE(missing_kallsyms);
  CHECK(missing_kallsyms.error().message.find("/nonexistent/kallsyms") == 0);
  auto missing_trace = OpenRawSession("/nonexistent/trace.pt", {});
  REQUIRE_FALSE(missing_trace);
  CHECK(missing_trace.error().message.find("/nonexistent/trace.pt") == 0);
}

TEST_CASE("kallsyms travel as a sideband member") {
  TempDir dir;
  RawInputOptions options;
  options.kallsyms = Sample("sample.ips");  // any text file stands in for /proc/kallsyms
  auto session = OpenRawSession(Sample("sample.pt"), options);
  REQUIRE(session);
  REQUIRE(WriteSessionArchive(*session, dir / "k.ptar", {}));
  auto back = OpenArchiveSession(dir / "k.ptar");
  REQUIRE(back);
  REQUIRE(back->manifest.sideband.size() == 1);
  CHECK(back->manifest.sideband[0].kind == "kallsyms");
  CHECK(back->manifest.sideband[0].member == "sideband/kallsyms");
  CHECK(back->sideband_bytes[0] == *ReadFileBytes(Sample("sample.ips")));
}
