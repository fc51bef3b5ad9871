#pragma once
// Sha256 answers "is this member the bytes that were archived?": the SHA-256 digest (FIPS 180-4)
// the .ptar manifest records for every member and for the manifest itself. Written here because
// the project's dependencies (zstd keeps its XXH64 private) export no digest.
#include <array>
#include <cstdint>
#include <span>
#include <string>

namespace ptprof::archive {

class Sha256 {
 public:
  using Digest = std::array<uint8_t, 32>;

  Sha256();
  void Update(std::span<const uint8_t> bytes);
  Digest Finish();  // the digest of everything passed to Update; the object is then spent

  static Digest Of(std::span<const uint8_t> bytes);

 private:
  std::array<uint32_t, 8> state_;
  uint8_t buffer_[64] = {};
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

// Lower-case hexadecimal, 64 characters.
std::string DigestHex(const Sha256::Digest& digest);

}  // namespace ptprof::archive
