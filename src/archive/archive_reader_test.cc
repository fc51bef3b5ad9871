#include "src/archive/archive_reader.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <system_error>
#include <thread>

#include "src/archive/archive_test_util.h"
#include "src/archive/archive_writer.h"
#include "src/model/huge_slabs.h"
#include "tests/unit/child_process.h"

using namespace ptprof;
using namespace ptprof::archive;
using namespace ptprof::archive::testing;

namespace {

// A small archive with two members; returns its bytes.
std::vector<uint8_t> SmallArchive(const TempDir& dir) {
  const std::string path = dir / "small.ptar";
  auto writer = ArchiveWriter::Create(path, true);
  REQUIRE(writer);
  std::vector<uint8_t> image(3000);
  for (size_t i = 0; i < image.size(); ++i) image[i] = static_cast<uint8_t>(i * 7 + (i >> 5));
  REQUIRE(writer->Add("streams/raw.pt", Bytes("\x02\x82\x02\x82 some trace")));
  REQUIRE(writer->Add("images/x/prog", image));
  REQUIRE(writer->Finish({{"tool", "test"}}));
  return ReadAll(path);
}

// True when every member of `bytes` reads back as in `original`.
bool SameContent(const ArchiveReader& reader, const ArchiveReader& original) {
  if (reader.members().size() != original.members().size()) return false;
  for (const MemberInfo& member : original.members()) {
    auto a = reader.Read(member.name);
    if (!a || *a != *original.Read(member.name)) return false;
  }
  return reader.manifest() == original.manifest();
}

// Writes an archive at `path` of one member, streams/cpu0.pt, of `size` bytes that do not
// compress much; returns them.
std::vector<uint8_t> WriteTraceArchive(const std::string& path, size_t size) {
  std::vector<uint8_t> trace(size);
  for (size_t i = 0; i < trace.size(); ++i) trace[i] = static_cast<uint8_t>((i * 2654435761u) >> 13);
  auto writer = ArchiveWriter::Create(path, true);
  REQUIRE(writer);
  REQUIRE(writer->Add("streams/cpu0.pt", trace));
  REQUIRE(writer->Finish({{"tool", "test"}}));
  return trace;
}

}  // namespace

TEST_CASE("every truncation of an archive is an error naming the member or the manifest") {
  TempDir dir;
  const auto bytes = SmallArchive(dir);
  auto whole = ArchiveReader::FromBytes("a.ptar", bytes);
  REQUIRE(whole);
  REQUIRE(whole->VerifyAll());
  const MemberInfo& image = whole->members()[1];
  for (size_t size = 0; size < bytes.size(); ++size) {
    auto reader = ArchiveReader::FromBytes(
        "a.ptar", std::vector<uint8_t>(bytes.begin(), bytes.begin() + static_cast<long>(size)));
    INFO("size " << size);
    REQUIRE_FALSE(reader);
    const std::string& message = reader.error().message;
    CHECK(message.rfind("a.ptar: ", 0) == 0);
    if (size > image.offset) {
      CHECK(message.find("member 'images/x/prog'") != std::string::npos);
      CHECK(message.find("truncated") != std::string::npos);
    } else if (size == image.offset) {
      CHECK(message.find("member 'images/x/prog'") != std::string::npos);
    }
  }
}

TEST_CASE("every bit flip is caught, or changes nothing that is read") {
  TempDir dir;
  const auto bytes = SmallArchive(dir);
  auto original = ArchiveReader::FromBytes("a.ptar", bytes);
  REQUIRE(original);
  size_t caught = 0, harmless = 0;
  for (size_t at = 0; at < bytes.size(); ++at) {
    auto damaged = bytes;
    damaged[at] ^= static_cast<uint8_t>(1u << (at % 8));
    auto reader = ArchiveReader::FromBytes("a.ptar", damaged);
    Status status = reader ? reader->VerifyAll() : Status(tl::unexpected(reader.error()));
    INFO("flip at " << at);
    if (!status) {
      ++caught;
      const std::string& message = status.error().message;
      CHECK(message.find('\n') == std::string::npos);
      // The damaged frame is named: the header frame is "manifest", the others their member.
      const char* expected = at < original->members()[0].offset        ? "manifest"
                             : at < original->members()[1].offset      ? "streams/raw.pt"
                                                                       : "images/x/prog";
      const bool names_it = message.find(std::string("member '") + expected + "'") !=
                            std::string::npos;
      // A flip in a frame's size fields may make an earlier frame look wrong at the next one.
      CHECK((names_it || message.find("member '") != std::string::npos));
    } else {
      CHECK(SameContent(*reader, *original));
      ++harmless;
    }
  }
  CHECK(caught > bytes.size() * 9 / 10);
}

TEST_CASE("a damaged member is named with its offset") {
  TempDir dir;
  auto bytes = SmallArchive(dir);
  auto original = ArchiveReader::FromBytes("a.ptar", bytes);
  REQUIRE(original);
  const MemberInfo image = original->members()[1];
  // The last 4 bytes of the frame are its XXH64-based checksum; the byte before them is data.
  bytes[image.offset + image.packed_size - 6] ^= 0x40;
  auto reader = ArchiveReader::FromBytes("a.ptar", bytes);
  REQUIRE(reader);
  auto read = reader->Read("images/x/prog");
  REQUIRE_FALSE(read);
  CHECK(read.error().message.rfind(
            fmt::format("a.ptar: offset {:#x}: member 'images/x/prog': damaged", image.offset),
            0) == 0);
  CHECK(reader->Read("streams/raw.pt"));
  // ReadShared checks the same and says the same.
  auto shared = reader->ReadShared(image);
  REQUIRE_FALSE(shared);
  CHECK(shared.error().message == read.error().message);
}

TEST_CASE("ReadShared gives a member's bytes as Read does, in memory of its own") {
  TempDir dir;
  auto original = ArchiveReader::FromBytes("a.ptar", SmallArchive(dir));
  REQUIRE(original);
  for (const MemberInfo& member : original->members()) {
    INFO(member.name);
    auto shared = original->ReadShared(member);
    REQUIRE(shared);
    CHECK(*shared == *original->Read(member));
    CHECK_FALSE(shared->mapped());  // not a file mapping
  }
}

TEST_CASE("ReadShared says which member it has no memory for") {
  if (HugeSlabs::PiecesOnTheHeap()) return;  // AddressSanitizer reserves more than any limit
  TempDir dir;
  auto reader = ArchiveReader::FromBytes("a.ptar", SmallArchive(dir));
  REQUIRE(reader);
  MemberInfo claimed = reader->members().front();
  claimed.size = uint64_t{900} << 20;  // what a damaged manifest may claim, under the 1 GiB cut
  // In a child whose address space cannot take another 900 MiB (the parent's stays whole).
  const ptprof::testing::ChildRun run = ptprof::testing::RunInChild([&](int out) {
    ptprof::testing::LimitAddressSpace(size_t{256} << 20);
    auto shared = reader->ReadShared(claimed);
    const std::string said = shared ? std::string("read") : shared.error().message;
    if (write(out, said.data(), said.size()) < 0) _exit(2);
  });
  CHECK(run.Exited(0));
  const std::string& said = run.output;
  CHECK(said == fmt::format("a.ptar: offset {:#x}: member '{}': cannot hold it in memory: no "
                            "memory for 943718400 bytes",
                            claimed.offset, claimed.name));
}

TEST_CASE("not an archive: empty, not zstd, zstd without the header, trailing bytes") {
  CHECK(ArchiveReader::FromBytes("e", std::vector<uint8_t>{}).error().message == "e: offset 0x0: empty file");
  CHECK(ArchiveReader::FromBytes("t", Bytes("hello world")).error().message.find(
            "not a zstd frame") != std::string::npos);
  auto plain = CompressFrame(Bytes("just some text compressed with zstd"));
  REQUIRE(plain);
  CHECK(ArchiveReader::FromBytes("z", *plain).error().message ==
        "z: manifest frame: offset 0x0: a zstd file, but not a ptprof archive (no PTAR header)");
  TempDir dir;
  auto bytes = SmallArchive(dir);
  bytes.push_back(0);
  auto trailing = ArchiveReader::FromBytes("x", bytes);
  REQUIRE_FALSE(trailing);
  CHECK(trailing.error().message.find("1 bytes after the last member") != std::string::npos);
  CHECK(ArchiveReader::Open(dir / "missing.ptar").error().message.rfind(dir / "missing.ptar", 0) ==
        0);
}

TEST_CASE("decompression never produces more than the recorded size") {
  auto frame = CompressFrame(std::vector<uint8_t>(1 << 20, 0));
  REQUIRE(frame);
  auto limited = DecompressFrame(*frame, 1000);
  REQUIRE_FALSE(limited);
  auto exact = DecompressFrame(*frame, 1 << 20);
  REQUIRE(exact);
  CHECK(exact->size() == (1u << 20));
  auto cut = DecompressFrame(std::span<const uint8_t>(frame->data(), frame->size() - 1), 1 << 20);
  CHECK_FALSE(cut);
}

TEST_CASE("a member read to a file is the member read to memory, with the same checks") {
  TempDir dir;
  const std::string path = dir / "big.ptar";
  // Larger than one decompression chunk, so that it is written in several pieces.
  const std::vector<uint8_t> trace = WriteTraceArchive(path, 400000);
  auto reader = ArchiveReader::Open(path);
  REQUIRE(reader);
  const MemberInfo member = reader->members()[0];
  REQUIRE(reader->ReadToFile(member, dir / "cpu0.pt"));
  CHECK(ReadAll(dir / "cpu0.pt") == trace);

  auto bytes = ReadAll(path);
  bytes[member.offset + member.packed_size - 6] ^= 0x40;
  auto damaged = ArchiveReader::FromBytes("d.ptar", bytes);
  REQUIRE(damaged);
  auto status = damaged->ReadToFile(member, dir / "cpu0-damaged.pt");
  REQUIRE_FALSE(status);
  CHECK(status.error().message.rfind(
            fmt::format("d.ptar: offset {:#x}: member 'streams/cpu0.pt': ", member.offset), 0) == 0);
  auto unwritable = reader->ReadToFile(member, dir / "missing/cpu0.pt");
  REQUIRE_FALSE(unwritable);
  CHECK(unwritable.error().message == dir / "missing/cpu0.pt" + ": cannot create: No such file or directory");
}

TEST_CASE("a large member is digested beside its decompression, with the same checks") {
  TempDir dir;
  const std::string path = dir / "large.ptar";
  // Past SideDigest::Worthwhile, in several pieces of DecompressFrameTo.
  const std::vector<uint8_t> trace = WriteTraceArchive(path, (9 << 20) + 12345);
  auto reader = ArchiveReader::Open(path);
  REQUIRE(reader);
  const MemberInfo member = reader->members()[0];
  CHECK(*reader->Read(member) == trace);
  CHECK(*reader->ReadShared(member) == trace);
  REQUIRE(reader->ReadToFile(member, dir / "cpu0.pt"));
  CHECK(ReadAll(dir / "cpu0.pt") == trace);

  // The manifest says another digest (rewritten with its own digest right): every way of
  // reading the member says it is damaged.
  auto bytes = ReadAll(path);
  const size_t first_frame = member.offset;
  auto first = DecompressFrame(std::span<const uint8_t>(bytes.data(), first_frame), 1 << 20);
  REQUIRE(first);
  std::string text(first->begin() + kHeaderSize, first->end());
  const std::string digest = DigestHex(member.sha256);
  const size_t at = text.find(digest);
  REQUIRE(at != std::string::npos);
  text[at] = text[at] == '0' ? '1' : '0';
  PtarHeader header;
  header.manifest_size = text.size();
  header.manifest_sha256 =
      Sha256::Of(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
  std::vector<uint8_t> content = EncodeHeader(header);
  content.insert(content.end(), text.begin(), text.end());
  auto frame = CompressFrame(content);
  REQUIRE(frame);
  std::vector<uint8_t> altered = *frame;
  altered.insert(altered.end(), bytes.begin() + static_cast<long>(first_frame), bytes.end());
  auto damaged = ArchiveReader::FromBytes("d.ptar", altered);
  REQUIRE(damaged);
  const MemberInfo moved = damaged->members()[0];
  const std::string expected = fmt::format(
      "d.ptar: offset {:#x}: member 'streams/cpu0.pt': checksum mismatch (the member is damaged)",
      moved.offset);
  auto read = damaged->Read(moved);
  REQUIRE_FALSE(read);
  CHECK(read.error().message == expected);
  auto shared = damaged->ReadShared(moved);
  REQUIRE_FALSE(shared);
  CHECK(shared.error().message == expected);
  auto written = damaged->ReadToFile(moved, dir / "cpu0-damaged.pt");
  REQUIRE_FALSE(written);
  CHECK(written.error().message == expected);
  CHECK_FALSE(damaged->VerifyAll());
}

TEST_CASE("a large member is digested where it is read when no thread can be started") {
  if (HugeSlabs::PiecesOnTheHeap()) return;  // AddressSanitizer reserves more than any limit
  TempDir dir;
  const std::string path = dir / "large.ptar";
  WriteTraceArchive(path, (9 << 20) + 12345);
  auto reader = ArchiveReader::FromBytes("large.ptar", ReadAll(path));
  REQUIRE(reader);
  const ptprof::testing::ChildRun run = ptprof::testing::RunWithoutThreads([&](int out) {
    auto verified = reader->VerifyAll();
    const std::string said = verified ? "verified" : verified.error().message;
    if (write(out, said.data(), said.size()) < 0) _exit(2);
  });
  CHECK(run.Exited(0));
  if (run.output == ptprof::testing::kThreadStarted) {
    WARN("the limit did not keep a thread from starting here: not tested");
    return;
  }
  CHECK(run.output == "verified");
}
