#include "src/archive/sha256.h"

#include <algorithm>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "src/archive/sha256_blocks.h"

using ptprof::archive::DigestHex;
using ptprof::archive::Sha256;

namespace {
std::string Hex(const std::string& text) {
  return DigestHex(Sha256::Of(std::span<const uint8_t>(
      reinterpret_cast<const uint8_t*>(text.data()), text.size())));
}
}  // namespace

TEST_CASE("SHA-256 of the FIPS 180-4 example messages") {
  CHECK(Hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(Hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST_CASE("SHA-256 over many pieces equals SHA-256 of the whole") {
  std::vector<uint8_t> million(1000000, 'a');
  Sha256 sha;
  // Pieces of awkward sizes cross the 64-byte block boundary in every way.
  size_t at = 0;
  for (size_t piece = 1; at < million.size(); piece = piece % 131 + 7) {
    const size_t n = std::min(piece, million.size() - at);
    sha.Update(std::span<const uint8_t>(million.data() + at, n));
    at += n;
  }
  const std::string expected = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0";
  CHECK(DigestHex(sha.Finish()) == expected);
  CHECK(DigestHex(Sha256::Of(million)) == expected);
}

TEST_CASE("SHA-256 of messages around the padding boundary") {
  // 55, 56 and 64 bytes need one, two and two blocks of padding.
  CHECK(Hex(std::string(55, 'x')) ==
        "d5e285683cd4efc02d021a5c62014694958901005d6f71e89e0989fac77e4072");
  CHECK(Hex(std::string(56, 'a')) ==
        "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  CHECK(Hex(std::string(64, 'a')) ==
        "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
}

TEST_CASE("SHA-256 blocks: the SHA extensions give the portable function's state") {
  namespace sha256 = ptprof::archive::sha256;
  std::vector<uint8_t> data(64 * 40);
  uint32_t seed = 12345;
  for (uint8_t& byte : data) {
    seed = seed * 1103515245 + 12345;
    byte = static_cast<uint8_t>(seed >> 16);
  }
  const uint32_t initial[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                               0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  // The portable function alone gives FIPS 180-4's digest of "abc" (one padded block).
  uint8_t abc[64] = {'a', 'b', 'c', 0x80};
  abc[63] = 24;  // the length in bits
  uint32_t state[8];
  std::copy(initial, initial + 8, state);
  sha256::PortableBlocks(state, abc, 1);
  CHECK(state[0] == 0xba7816bf);
  CHECK(state[7] == 0xf20015ad);
  if (!sha256::HasShaExtensions()) {
    WARN("this CPU has no SHA extensions: only the portable function was checked");
    return;
  }
  for (size_t blocks : {0, 1, 2, 3, 17, 40}) {
    INFO(blocks << " blocks");
    uint32_t portable[8], extensions[8];
    std::copy(initial, initial + 8, portable);
    std::copy(initial, initial + 8, extensions);
    sha256::PortableBlocks(portable, data.data(), blocks);
    sha256::ShaExtensionBlocks(extensions, data.data(), blocks);
    CHECK(std::equal(portable, portable + 8, extensions));
  }
}
