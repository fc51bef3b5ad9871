#include "src/archive/ptar_format.h"

#include <catch2/catch.hpp>

using namespace ptprof::archive;

TEST_CASE("the header round-trips and is 56 bytes") {
  PtarHeader header;
  header.manifest_size = 1234;
  header.manifest_sha256[0] = 0xab;
  header.manifest_sha256[31] = 0xcd;
  const auto bytes = EncodeHeader(header);
  REQUIRE(bytes.size() == kHeaderSize);
  CHECK(std::string(bytes.begin(), bytes.begin() + 4) == "PTAR");
  auto back = DecodeHeader(bytes);
  REQUIRE(back);
  CHECK(back->format_version == 1);
  CHECK(back->manifest_size == 1234);
  CHECK(back->manifest_sha256 == header.manifest_sha256);
}

TEST_CASE("header errors name the offset of the bad field") {
  PtarHeader header;
  header.manifest_size = 10;
  auto bytes = EncodeHeader(header);
  auto version = bytes;
  version[8] = 2;
  CHECK(DecodeHeader(version).error().message ==
        "offset 0x8: format version 2 (this ptprof reads version 1)");
  auto huge = bytes;
  huge[23] = 0xff;
  CHECK(DecodeHeader(huge).error().message.rfind("offset 0x10: manifest size", 0) == 0);
  auto magic = bytes;
  magic[0] = 'X';
  CHECK(DecodeHeader(magic).error().message.find("no PTAR header") != std::string::npos);
  CHECK(DecodeHeader(std::span<const uint8_t>(bytes.data(), 20)).error().message ==
        "offset 0x14: the archive header is cut short");
}

TEST_CASE("member names are relative paths of plain characters") {
  CHECK(CheckMemberName("streams/raw.pt"));
  CHECK(CheckMemberName("images/46643ff0/sample"));
  CHECK(CheckMemberName("a+b_c-d.e"));
  CHECK_FALSE(CheckMemberName(""));
  CHECK_FALSE(CheckMemberName("/etc/passwd"));
  CHECK_FALSE(CheckMemberName("images/../../x"));
  CHECK_FALSE(CheckMemberName("images/"));
  CHECK_FALSE(CheckMemberName("a//b"));
  CHECK_FALSE(CheckMemberName("./a"));
  CHECK_FALSE(CheckMemberName("with space"));
  CHECK_FALSE(CheckMemberName(std::string(256, 'a')));
}

TEST_CASE("digests parse from 64 lower-case hex digits only") {
  Sha256::Digest digest;
  const std::string hex = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
  REQUIRE(ParseDigest(hex, digest));
  CHECK(DigestHex(digest) == hex);
  CHECK_FALSE(ParseDigest(hex.substr(1), digest));
  CHECK_FALSE(ParseDigest("BA" + hex.substr(2), digest));
}
