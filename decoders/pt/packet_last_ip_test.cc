#include "decoders/pt/packet_last_ip.h"

#include <catch2/catch.hpp>

using namespace ptprof::pt;

TEST_CASE("the last IP starts unknown") {
  LastIp last;
  CHECK(last.Query() == LastIp::State::kNone);
  // A suppressed IP before any IP is still "no IP".
  CHECK(last.Update({IpCompression::kSuppressed, 0}) == LastIp::State::kNone);
}

TEST_CASE("compressed IPs replace the low bytes of the last IP") {
  LastIp last;
  REQUIRE(last.Update({IpCompression::kFull, 0x0a00ccccddddeeee}) == LastIp::State::kValid);
  CHECK(last.Ip() == 0x0a00ccccddddeeee);
  last.Update({IpCompression::kUpdate48, 0xffffeeeeffff});
  CHECK(last.Ip() == 0x0a00ffffeeeeffff);
  last.Update({IpCompression::kUpdate16, 0xdddd});
  CHECK(last.Ip() == 0x0a00ffffeeeedddd);
  last.Update({IpCompression::kSignExtend48, 0xffffddddeeee});
  CHECK(last.Ip() == 0xffffffffddddeeee);
  last.Update({IpCompression::kUpdate32, 0xeeeeffff});
  CHECK(last.Ip() == 0xffffffffeeeeffff);
}

TEST_CASE("a suppressed IP hides the last IP until the next update") {
  LastIp last;
  last.Update({IpCompression::kFull, 0x401000});
  CHECK(last.Update({IpCompression::kSuppressed, 0}) == LastIp::State::kSuppressed);
  CHECK(last.Update({IpCompression::kUpdate16, 0x2000}) == LastIp::State::kValid);
  CHECK(last.Ip() == 0x402000);
}

TEST_CASE("a reserved compression code is rejected without changing the IP") {
  LastIp last;
  last.Update({IpCompression::kFull, 0x401000});
  CHECK(last.Update({static_cast<IpCompression>(5), 0x1234}) == LastIp::State::kBadCompression);
  CHECK(last.Ip() == 0x401000);
  last.Reset();
  CHECK(last.Query() == LastIp::State::kNone);
}

TEST_CASE("only the payload's bytes of an update count") {
  // The fast query decoder reads 8 bytes of the trace whatever the payload's size: the bytes
  // past the payload (here 0x5a) belong to the next packets.
  LastIp last;
  last.Update({IpCompression::kFull, 0x0000123456789abc});
  last.Update({IpCompression::kUpdate16, 0x5a5a5a5a5a5a1111});
  CHECK(last.Ip() == 0x0000123456781111);
  last.Update({IpCompression::kUpdate32, 0x5a5a5a5a22222222});
  CHECK(last.Ip() == 0x0000123422222222);
  last.Update({IpCompression::kUpdate48, 0x5a5a333333333333});
  CHECK(last.Ip() == 0x0000333333333333);
  last.Update({IpCompression::kSignExtend48, 0x5a5a7fff00001000});
  CHECK(last.Ip() == 0x00007fff00001000);
  last.Update({IpCompression::kSignExtend48, 0x5a5affff80001000});
  CHECK(last.Ip() == 0xffffffff80001000);
}
