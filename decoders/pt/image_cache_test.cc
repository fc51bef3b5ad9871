#include "decoders/pt/image_cache.h"

#include <algorithm>

#include <catch2/catch.hpp>

#include "decoders/pt/flow_testing.h"

using namespace ptprof;
using namespace ptprof::pt;
using namespace ptprof::pt::testing;

TEST_CASE("image sections map into libipt's image and read back by section id") {
  TempFile code(SampleProgram());
  ImageSet images;
  REQUIRE(images.AddRaw(RawImageSpec{code.path(), 0, UINT64_MAX, kSampleBase}));
  PtImageCache cache;
  REQUIRE(cache.AddAll(images));
  // libipt hands out section ids from 1; the sample program is the only section.
  uint8_t bytes[4] = {};
  REQUIRE(cache.Read(1, kSampleBase + 1, bytes, sizeof bytes) == 4);
  CHECK(bytes[0] == 0x74);  // je
  CHECK(bytes[2] == 0x90);
  CHECK(cache.Read(1, kSampleBase + 0x100, bytes, sizeof bytes) < 0);
  CHECK(cache.Read(7, kSampleBase, bytes, sizeof bytes) < 0);
}

TEST_CASE("a file libipt cannot map is an error naming it") {
  PtImageCache cache;
  ImageSection missing;
  missing.file = "/nonexistent/code.bin";
  missing.size = 16;
  missing.address = 0x1000;
  auto status = cache.Add(missing);
  REQUIRE_FALSE(status);
  CHECK(status.error().message.find("/nonexistent/code.bin") == 0);
}

namespace {

// A section of `file` at `address` holding its own bytes (as ImageSet loads them).
ImageSection Section(const std::string& file, uint64_t offset, uint64_t size, uint64_t address) {
  ImageSection section;
  section.file = file;
  section.file_offset = offset;
  section.size = size;
  section.address = address;
  const std::vector<uint8_t> program = SampleProgram();
  section.bytes = SharedBytes(std::vector<uint8_t>(program.begin() + static_cast<long>(offset),
                                                   program.begin() + static_cast<long>(offset + size)));
  return section;
}

}  // namespace

TEST_CASE("a cache that defers libipt gives the section ids libipt gives, and adds them later") {
  TempFile code(SampleProgram());
  // Overlapping sections, the same section twice, and a second image: ids as libipt gives them.
  const std::vector<std::pair<ImageSection, size_t>> adds = {
      {Section(code.path(), 0, 0x20, 0x1000), 0}, {Section(code.path(), 0x10, 0x10, 0x1010), 0},
      {Section(code.path(), 0, 0x20, 0x1000), 0}, {Section(code.path(), 0, 0x20, 0x5000), 1},
      {Section(code.path(), 0x10, 0x10, 0x1010), 1}, {Section(code.path(), 4, 8, 0x1004), 0}};
  PtImageCache eager;
  PtImageCache deferred(true);
  REQUIRE(eager.AddImage() == 1);
  REQUIRE(deferred.AddImage() == 1);
  for (const auto& [section, image] : adds) {
    REQUIRE(eager.Add(section, image));
    REQUIRE(deferred.Add(section, image));
  }
  for (size_t image : {0u, 1u}) {
    for (uint64_t ip : {0x1000u, 0x1001u, 0x1005u, 0x1011u, 0x5000u, 0x5011u, 0x9000u}) {
      INFO("image " << image << ", ip " << ip);
      uint8_t a[4] = {}, b[4] = {};
      int isid_a = 0, isid_b = 0;
      const int read_a = eager.ReadVisible(ip, a, sizeof a, isid_a, image);
      const int read_b = deferred.ReadVisible(ip, b, sizeof b, isid_b, image);
      CHECK(read_a == read_b);
      CHECK(isid_a == isid_b);
      CHECK(std::equal(a, a + 4, b));
    }
  }
  // libipt's side, built when asked for: its section cache holds the same sections under the
  // same ids as the eager cache's.
  REQUIRE(deferred.Realize());
  REQUIRE(deferred.image(1) != nullptr);
  for (const auto& [section, image] : adds) {
    for (int isid = 1; isid <= 5; ++isid) {
      uint8_t a[2] = {}, b[2] = {};
      const int read_a = pt_iscache_read(eager.iscache(), a, sizeof a, isid, section.address);
      const int read_b = pt_iscache_read(deferred.iscache(), b, sizeof b, isid, section.address);
      INFO("isid " << isid << ", address " << section.address);
      CHECK(read_a == read_b);
      CHECK(std::equal(a, a + 2, b));
    }
  }
}

TEST_CASE("a deferred section libipt cannot map fails when libipt's side is asked for") {
  PtImageCache cache(true);
  ImageSection missing = Section("/nonexistent/code.bin", 0, 16, 0x1000);
  REQUIRE(cache.Add(missing));
  uint8_t byte = 0;
  int isid = 0;
  CHECK(cache.ReadVisible(0x1000, &byte, 1, isid) == 1);  // from the section's own bytes
  auto status = cache.Realize();
  REQUIRE_FALSE(status);
  CHECK(status.error().message.find("/nonexistent/code.bin") == 0);
  CHECK(cache.image() == nullptr);
  CHECK_FALSE(cache.Realize());
}

TEST_CASE("a section without its bytes goes to libipt at once") {
  PtImageCache cache(true);
  ImageSection missing;
  missing.file = "/nonexistent/code.bin";
  missing.size = 16;
  missing.address = 0x1000;
  CHECK_FALSE(cache.Add(missing));
}
