#include "src/pipeline/session.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "src/archive/archive_reader.h"
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

  auto back = OpenArchiveSession(out);
  REQUIRE(back);
  CHECK(back->kind == InputKind::kPtar);
  CHECK(back->stream_bytes == session->stream_bytes);
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
