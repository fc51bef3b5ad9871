#include "sideband/image_set.h"

#include <cstdio>
#include <string>

#include <unistd.h>

#include <catch2/catch.hpp>

#include "sideband/image_testing.h"

using namespace ptprof;

using testing::WriteTempFile;

TEST_CASE("raw images map file ranges; later images hide earlier ones") {
  std::vector<uint8_t> bytes(64);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i);
  std::string file = WriteTempFile(bytes);
  ImageSet set;
  REQUIRE(set.AddRaw(RawImageSpec{file, 0, UINT64_MAX, 0x1000}));
  REQUIRE(set.AddRaw(RawImageSpec{file, 0x10, 0x8, 0x1020}));  // bytes 16..23 at 0x1020
  uint8_t buf[16];
  REQUIRE(set.Read(0x1000, buf, 4) == 4);
  CHECK(buf[3] == 3);
  REQUIRE(set.Read(0x101c, buf, 16) == 4);  // stops where the later image starts
  CHECK(buf[0] == 0x1c);
  REQUIRE(set.Read(0x1020, buf, 16) == 8);
  CHECK(buf[0] == 0x10);
  REQUIRE(set.Read(0x1028, buf, 2) == 2);  // the earlier image shows again after it
  CHECK(buf[0] == 0x28);
  CHECK(set.Read(0x1040, buf, 1) == 0);
  CHECK(set.Read(0xfff, buf, 1) == 0);
  CHECK_FALSE(set.AddRaw(RawImageSpec{file, 64, UINT64_MAX, 0}));
  REQUIRE(set.AddRaw(RawImageSpec{file, 0x30, 0x100, 0x9000}));  // stops at the end of the file
  CHECK(set.sections().back().size == 0x10);
  CHECK(set.Read(0x900f, buf, 4) == 1);
  CHECK(buf[0] == 0x3f);
  auto missing = set.AddRaw(RawImageSpec{"/nonexistent.bin", 0, UINT64_MAX, 0});
  REQUIRE_FALSE(missing);
  CHECK(missing.error().message.find("/nonexistent.bin") == 0);
  std::remove(file.c_str());
}

TEST_CASE("an image file is mapped once; its sections are slices of the mapping, read after "
          "the file's name is gone") {
  std::vector<uint8_t> bytes(8192);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 7);
  std::string file = WriteTempFile(bytes);
  ImageSet set;
  REQUIRE(set.AddRaw(RawImageSpec{file, 0, 4096, 0x1000}));
  REQUIRE(set.AddRaw(RawImageSpec{file, 4096, 4096, 0x8000}));
  const ImageSection& first = set.sections()[0];
  const ImageSection& second = set.sections()[1];
  CHECK(first.bytes.mapped());
  CHECK(second.bytes.data() - first.bytes.data() == 4096);  // one mapping
  std::remove(file.c_str());
  uint8_t buf[2];
  REQUIRE(set.Read(0x8001, buf, 2) == 2);
  CHECK(buf[0] == static_cast<uint8_t>(4097 * 7));
  CHECK(buf[1] == static_cast<uint8_t>(4098 * 7));
}

TEST_CASE("ELF images bring bytes and symbols") {
  ImageSet set;
  REQUIRE(set.AddElf(ElfImageSpec{"/proc/self/exe", 0x500000000000}));
  CHECK(set.symbols().size() > 0);
  const ImageSection& first = set.sections().front();
  CHECK(first.address == 0x500000000000);
  uint8_t magic[4];
  if (first.file_offset == 0) {
    REQUIRE(set.Read(first.address, magic, 4) == 4);
    CHECK(magic[1] == 'E');
  }
}
