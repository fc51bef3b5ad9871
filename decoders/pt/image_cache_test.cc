#include "decoders/pt/image_cache.h"

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
