#include "src/cli/etm_archive.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>

#include "src/archive/archive_reader.h"
#include "src/archive/archive_writer.h"
#include "src/archive/manifest.h"

using namespace ptprof::cli;
namespace fs = std::filesystem;

namespace {

// A small snapshot in a temporary directory: one core with a dump in a subdirectory, one ETMv4
// source, one buffer, and a file the snapshot does not name (which must not be archived).
struct TempDir {
  fs::path dir;
  TempDir() {
    char tmpl[] = "/tmp/ptprof-etm-archive-XXXXXX";
    dir = mkdtemp(tmpl);
  }
  ~TempDir() { fs::remove_all(dir); }
  void Write(const std::string& name, const std::string& text) {
    fs::create_directories((dir / name).parent_path());
    std::ofstream(dir / name, std::ios::binary) << text;
  }
  std::string Read(const fs::path& path) {
    std::ostringstream s;
    s << std::ifstream(path, std::ios::binary).rdbuf();
    return s.str();
  }
};

void WriteSnapshot(TempDir& t) {
  t.Write("snap/snapshot.ini", "[snapshot]\nversion=1.0\n[device_list]\ndevice0=cpu_0.ini\n"
                               "device1=etm.ini\n[trace]\nmetadata=meta/trace.ini\n");
  t.Write("snap/cpu_0.ini", "[device]\nname=cpu_0\nclass=core\ntype=Cortex-A53\n[dump1]\n"
                            "file=dumps/code.bin\naddress=0x1000\nlength=0x8\n");
  t.Write("snap/etm.ini", "[device]\nname=ETM_0\nclass=trace_source\ntype=ETM4\n[regs]\n"
                          "TRCCONFIGR(0x004)=0x0\nTRCTRACEIDR(0x010)=0x10\n"
                          "TRCIDR0(0x078)=0x28000EA1\nTRCIDR2(0x07A)=0x00000488\n");
  t.Write("snap/meta/trace.ini", "[trace_buffers]\nbuffers=buffer0\n[buffer0]\nname=ETB_0\n"
                                 "file=trace.bin\nformat=coresight\n[source_buffers]\nETM_0=ETB_0\n"
                                 "[core_trace_sources]\ncpu_0=ETM_0\n");
  t.Write("snap/dumps/code.bin", "\x01\x02\x03\x04\x05\x06\x07\x08");
  t.Write("snap/trace.bin", std::string(16, '\x5a'));
  t.Write("snap/notes.txt", "not part of the snapshot");
}

}  // namespace

TEST_CASE("a snapshot directory round-trips through a .ptar file by file") {
  TempDir t;
  WriteSnapshot(t);
  EtmArchiveOptions options;
  options.output = (t.dir / "x.ptar").string();
  options.tool = "test";
  auto summary = WriteSnapshotArchive((t.dir / "snap").string(), options);
  REQUIRE(summary);
  CHECK(summary->files == 6);

  auto reader = ptprof::archive::ArchiveReader::Open(options.output);
  REQUIRE(reader);
  CHECK(reader->Find("coresight/dumps/code.bin"));
  CHECK(reader->Find("coresight/meta/trace.ini"));
  CHECK(!reader->Find("coresight/notes.txt"));

  auto restored = RestoreEtmArchive(options.output);
  REQUIRE(restored);
  REQUIRE(restored->has_value());
  CHECK((*restored)->kind == kCoreSightSnapshotSource);
  for (const char* name : {"snapshot.ini", "cpu_0.ini", "etm.ini", "meta/trace.ini",
                           "dumps/code.bin", "trace.bin"})
    CHECK(t.Read(fs::path((*restored)->path) / name) == t.Read(t.dir / "snap" / name));
  CHECK(!fs::exists(fs::path((*restored)->path) / "notes.txt"));
}

TEST_CASE("a snapshot file outside the directory is refused, naming it") {
  TempDir t;
  WriteSnapshot(t);
  t.Write("snap/cpu_0.ini", "[device]\nname=cpu_0\nclass=core\ntype=Cortex-A53\n[dump1]\n"
                            "file=../outside.bin\naddress=0x1000\n");
  t.Write("outside.bin", "x");
  EtmArchiveOptions options;
  options.output = (t.dir / "x.ptar").string();
  auto summary = WriteSnapshotArchive((t.dir / "snap").string(), options);
  REQUIRE(!summary);
  CHECK(summary.error().message.find("outside.bin: lies outside the snapshot directory") !=
        std::string::npos);
  CHECK(!fs::exists(options.output));
}

TEST_CASE("a .ptar of another input is not restored as CoreSight; a missing one is an error") {
  TempDir t;
  const std::string path = (t.dir / "pt.ptar").string();
  auto writer = ptprof::archive::ArchiveWriter::Create(path, false);
  REQUIRE(writer);
  ptprof::archive::Manifest manifest;
  manifest.source.kind = "raw_pt";
  const std::vector<uint8_t> bytes{1, 2, 3};
  REQUIRE(writer->Add("sideband/kallsyms", bytes));
  manifest.sideband.push_back({"kallsyms", "kallsyms", "sideband/kallsyms"});
  REQUIRE(writer->Finish(ptprof::archive::ManifestToJson(manifest)));
  auto restored = RestoreEtmArchive(path);
  REQUIRE(restored);
  CHECK(!restored->has_value());
  auto missing = RestoreEtmArchive((t.dir / "missing.ptar").string());
  REQUIRE(!missing);
  CHECK(missing.error().message.find("missing.ptar") != std::string::npos);
}
