#include "src/archive/archive_writer.h"

#include <filesystem>

#include <catch2/catch.hpp>

#include "src/archive/archive_reader.h"
#include "src/archive/archive_test_util.h"

using namespace ptprof::archive;
using namespace ptprof::archive::testing;

TEST_CASE("a written archive is one zstd stream: header frame, then one frame per member") {
  TempDir dir;
  const std::string path = dir / "out.ptar";
  auto writer = ArchiveWriter::Create(path, false);
  REQUIRE(writer);
  REQUIRE(writer->Add("streams/raw.pt", Bytes("trace bytes")));
  REQUIRE(writer->Add("images/a/sample", std::vector<uint8_t>(100000, 0x90)));
  CHECK(writer->Has("streams/raw.pt"));
  nlohmann::ordered_json manifest;
  manifest["tool"] = "test";
  REQUIRE(writer->Finish(manifest));

  const auto bytes = ReadAll(path);
  REQUIRE(bytes.size() > 4);
  CHECK(bytes[0] == 0x28);  // zstd magic 28 b5 2f fd
  CHECK(bytes[3] == 0xfd);
  auto reader = ArchiveReader::Open(path);
  REQUIRE(reader);
  CHECK(reader->manifest()["format"] == "ptar");
  CHECK(reader->manifest()["format_version"] == 1);
  CHECK(reader->manifest()["tool"] == "test");
  REQUIRE(reader->members().size() == 2);
  CHECK(reader->members()[1].size == 100000);
  CHECK(reader->members()[1].packed_size < 1000);
  CHECK(reader->members()[1].offset == reader->members()[0].offset +
                                            reader->members()[0].packed_size);
  CHECK(*reader->Read("streams/raw.pt") == Bytes("trace bytes"));
  // No temporary file is left beside the output.
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    (void)entry;
    ++files;
  }
  CHECK(files == 1);
}

TEST_CASE("an existing output is replaced only with force") {
  TempDir dir;
  const std::string path = dir / "out.ptar";
  WriteAll(path, Bytes("precious"));
  auto refused = ArchiveWriter::Create(path, false);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message == path + ": already exists (use --force to replace it)");
  CHECK(ReadAll(path) == Bytes("precious"));

  auto forced = ArchiveWriter::Create(path, true);
  REQUIRE(forced);
  REQUIRE(forced->Finish(nlohmann::ordered_json::object()));
  CHECK(ArchiveReader::Open(path));
}

TEST_CASE("an output that appears while writing is not overwritten") {
  TempDir dir;
  const std::string path = dir / "out.ptar";
  auto writer = ArchiveWriter::Create(path, false);
  REQUIRE(writer);
  WriteAll(path, Bytes("made meanwhile"));
  auto status = writer->Finish(nlohmann::ordered_json::object());
  REQUIRE_FALSE(status);
  CHECK(status.error().message.find("already exists") != std::string::npos);
  CHECK(ReadAll(path) == Bytes("made meanwhile"));
}

TEST_CASE("writer errors: bad and duplicate member names, unwritable directory") {
  TempDir dir;
  auto writer = ArchiveWriter::Create(dir / "out.ptar", false);
  REQUIRE(writer);
  CHECK_FALSE(writer->Add("../escape", Bytes("x")));
  REQUIRE(writer->Add("a", Bytes("x")));
  auto twice = writer->Add("a", Bytes("y"));
  REQUIRE_FALSE(twice);
  CHECK(twice.error().message == dir / "out.ptar" + ": member 'a' added twice");

  auto nowhere = ArchiveWriter::Create(dir / "no-such-dir/out.ptar", false);
  REQUIRE(nowhere);
  auto status = nowhere->Finish(nlohmann::ordered_json::object());
  REQUIRE_FALSE(status);
  CHECK(status.error().message.find("cannot create a temporary file") != std::string::npos);
}
