#include "src/archive/side_digest.h"

#include <catch2/catch.hpp>

#include <vector>

using ptprof::archive::DigestHex;
using ptprof::archive::Sha256;
using ptprof::archive::SideDigest;

TEST_CASE("SideDigest gives the digest of its pieces, in order, through two reused buffers") {
  std::vector<uint8_t> whole(3 << 20);
  for (size_t i = 0; i < whole.size(); ++i) whole[i] = static_cast<uint8_t>((i * 2654435761u) >> 11);
  // As DecompressFrameTo hands pieces over: in two buffers taken in turn, each overwritten as soon
  // as the call after the one that handed it over has returned.
  for (size_t piece : {size_t{1}, size_t{63}, size_t{4096}, size_t{100003}, size_t{1} << 20}) {
    INFO("pieces of " << piece);
    std::vector<uint8_t> buffers[2] = {std::vector<uint8_t>(piece), std::vector<uint8_t>(piece)};
    SideDigest side;
    int turn = 0;
    for (size_t at = 0; at < whole.size() && at < 200 * piece; at += piece) {
      std::vector<uint8_t>& buffer = buffers[turn];
      turn ^= 1;
      const size_t n = std::min(piece, whole.size() - at);
      std::copy(whole.begin() + static_cast<long>(at), whole.begin() + static_cast<long>(at + n),
                buffer.begin());
      side.Add(std::span<const uint8_t>(buffer.data(), n));
    }
    const size_t digested = std::min(whole.size(), 200 * piece);
    CHECK(DigestHex(side.Finish()) ==
          DigestHex(Sha256::Of(std::span<const uint8_t>(whole.data(), digested))));
  }
}

TEST_CASE("SideDigest of nothing, and one left unfinished") {
  SideDigest empty;
  CHECK(DigestHex(empty.Finish()) ==
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  // Destroyed with a piece in hand (an error stopped the reading): waits for it, then stops.
  std::vector<uint8_t> piece(1 << 20, 7);
  SideDigest abandoned;
  abandoned.Add(piece);
}

TEST_CASE("SideDigest is taken for large members only") {
  CHECK_FALSE(SideDigest::Worthwhile(1 << 20));
  if (std::thread::hardware_concurrency() > 1) CHECK(SideDigest::Worthwhile(64 << 20));
}
