#include "src/pipeline/member_reads.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "src/archive/archive_test_util.h"
#include "src/archive/archive_writer.h"

namespace ptprof {
namespace {

using archive::ArchiveReader;
using archive::testing::ReadAll;
using archive::testing::TempDir;

// Bytes that do not compress much, different for each `seed`.
std::vector<uint8_t> Noise(size_t size, uint32_t seed) {
  std::vector<uint8_t> bytes(size);
  uint32_t x = seed * 2654435761u + 1;
  for (uint8_t& byte : bytes) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    byte = static_cast<uint8_t>(x);
  }
  return bytes;
}

// An archive of six members of different sizes; returns its bytes and the members' contents.
std::vector<uint8_t> SixMembers(const TempDir& dir, std::vector<std::vector<uint8_t>>& contents) {
  const std::string path = dir / "six.ptar";
  auto writer = archive::ArchiveWriter::Create(path, true);
  REQUIRE(writer);
  const size_t sizes[] = {1000, 300000, 20, 2500000, 70000, 5};
  for (uint32_t i = 0; i < 6; ++i) {
    contents.push_back(Noise(sizes[i], i));
    REQUIRE(writer->Add(fmt::format("m{}", i), contents.back()));
  }
  REQUIRE(writer->Finish({{"tool", "test"}}));
  return ReadAll(path);
}

// A read of every member of `reader`, each kind in turn, files in `dir`.
std::vector<MemberRead> EveryKind(const ArchiveReader& reader, const TempDir& dir,
                                  const std::string& tag) {
  std::vector<MemberRead> reads;
  const MemberRead::To kinds[] = {MemberRead::To::kFile, MemberRead::To::kMappedFile,
                                  MemberRead::To::kShared, MemberRead::To::kMemory};
  for (size_t i = 0; i < reader.members().size(); ++i) {
    MemberRead& read = reads.emplace_back();
    read.member = &reader.members()[i];
    read.to = kinds[i % 4];
    read.file = dir / fmt::format("{}-{}", tag, i);
  }
  return reads;
}

std::vector<uint8_t> Got(const MemberRead& read) {
  switch (read.to) {
    case MemberRead::To::kFile:
      return ReadAll(read.file);
    case MemberRead::To::kMappedFile:
    case MemberRead::To::kShared:
      return std::vector<uint8_t>(read.shared.data(), read.shared.data() + read.shared.size());
    case MemberRead::To::kMemory:
      return read.bytes;
  }
  return {};
}

TEST_CASE("members read on several threads are each where they were sent, as on one") {
  TempDir dir;
  std::vector<std::vector<uint8_t>> contents;
  auto reader = ArchiveReader::FromBytes("six.ptar", SixMembers(dir, contents));
  REQUIRE(reader);
  for (unsigned jobs : {1u, 2u, 3u, 8u}) {
    std::vector<MemberRead> reads = EveryKind(*reader, dir, fmt::format("j{}", jobs));
    REQUIRE(ReadMembers(*reader, reads, jobs));
    for (size_t i = 0; i < reads.size(); ++i) {
      INFO("jobs " << jobs << ", member " << i);
      CHECK(Got(reads[i]) == contents[i]);
    }
  }
  std::vector<MemberRead> none;
  CHECK(ReadMembers(*reader, none, 2));
}

TEST_CASE("the first damaged member in the archive's order is the error, on any thread count") {
  TempDir dir;
  std::vector<std::vector<uint8_t>> contents;
  std::vector<uint8_t> bytes = SixMembers(dir, contents);
  auto original = ArchiveReader::FromBytes("six.ptar", bytes);
  REQUIRE(original);
  // Members 1 and 3 damaged (a data byte before each frame's 4-byte checksum); 3 is the
  // largest, read first when several threads share the work.
  for (size_t damaged : {size_t{1}, size_t{3}}) {
    const archive::MemberInfo& member = original->members()[damaged];
    bytes[member.offset + member.packed_size - 6] ^= 0x40;
  }
  auto reader = ArchiveReader::FromBytes("six.ptar", bytes);
  REQUIRE(reader);
  const std::string expected =
      fmt::format("six.ptar: offset {:#x}: member 'm1': damaged", reader->members()[1].offset);
  for (unsigned jobs : {1u, 2u, 4u}) {
    std::vector<MemberRead> reads = EveryKind(*reader, dir, fmt::format("d{}", jobs));
    const Status status = ReadMembers(*reader, reads, jobs);
    REQUIRE_FALSE(status);
    INFO("jobs " << jobs);
    CHECK(status.error().message.rfind(expected, 0) == 0);
  }
}

}  // namespace
}  // namespace ptprof
