#include "decoders/etm/dstream_frames.h"

#include <catch2/catch.hpp>

using namespace ptprof::etm;

TEST_CASE("a DSTREAM capture loses the 8-byte footer of each 512-byte block") {
  std::vector<uint8_t> capture(512 + 100);
  for (size_t i = 0; i < capture.size(); ++i) capture[i] = static_cast<uint8_t>(i % 251);
  const std::vector<uint8_t> data = WithoutDstreamFooters(capture);
  REQUIRE(data.size() == 504 + 100);
  CHECK(data[503] == capture[503]);
  CHECK(data[504] == capture[512]);  // the footer's bytes 504..511 are gone
  CHECK(data.back() == capture.back());
}

TEST_CASE("FSYNCs before frames are taken out, and each frame's shift says where it was") {
  const std::vector<uint8_t> fsync = {0xff, 0xff, 0xff, 0x7f};
  std::vector<uint8_t> a(16, 0xa1), b(16, 0xb2);
  // FSYNC, frame a, two FSYNCs, frame b, then 10 bytes of a frame cut by the end.
  std::vector<uint8_t> in = fsync;
  in.insert(in.end(), a.begin(), a.end());
  in.insert(in.end(), fsync.begin(), fsync.end());
  in.insert(in.end(), fsync.begin(), fsync.end());
  in.insert(in.end(), b.begin(), b.end());
  in.insert(in.end(), 10, 0xc3);
  std::vector<uint64_t> shift;
  const std::vector<uint8_t> frames = WithoutFsyncs(in, shift);
  std::vector<uint8_t> expected = a;
  expected.insert(expected.end(), b.begin(), b.end());
  CHECK(frames == expected);
  CHECK(shift == std::vector<uint64_t>{4, 12});  // a at 0 + 4, b at 16 + 12 = 28
}
