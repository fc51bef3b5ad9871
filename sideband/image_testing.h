#pragma once
// A raw image for the delta tests: code bytes written to a temporary file and mapped at an address.
#include <cstdint>
#include <string>
#include <vector>

#include <unistd.h>

#include <catch2/catch.hpp>

#include "sideband/image_set.h"

namespace ptprof::delta::testing {

inline ImageSet ImageWith(const std::vector<uint8_t>& code, uint64_t address) {
  char path[] = "/tmp/ptprof_delta_XXXXXX";
  int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  REQUIRE(write(fd, code.data(), code.size()) == static_cast<ssize_t>(code.size()));
  close(fd);
  ImageSet images;
  REQUIRE(images.AddRaw(RawImageSpec{path, 0, UINT64_MAX, address}));
  unlink(path);  // the image holds the bytes
  return images;
}

}  // namespace ptprof::delta::testing
