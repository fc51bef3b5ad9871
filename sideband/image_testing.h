#pragma once
// Test helpers for images: bytes written to a temporary file, and a raw image of them mapped at
// an address.
#include <cstdint>
#include <string>
#include <vector>

#include <unistd.h>

#include <catch2/catch.hpp>

#include "sideband/image_set.h"

namespace ptprof::testing {

// The path of a new temporary file holding `bytes` (the caller removes it).
inline std::string WriteTempFile(const std::vector<uint8_t>& bytes) {
  char path[] = "/tmp/ptprof_image_XXXXXX";
  int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  REQUIRE(write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
  close(fd);
  return path;
}

inline ImageSet ImageWith(const std::vector<uint8_t>& code, uint64_t address) {
  const std::string path = WriteTempFile(code);
  ImageSet images;
  REQUIRE(images.AddRaw(RawImageSpec{path, 0, UINT64_MAX, address}));
  unlink(path.c_str());  // the image holds the bytes
  return images;
}

}  // namespace ptprof::testing
