#include "decoders/pt/fast/packet_scan.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <random>
#include <vector>

#include "decoders/pt/packet_reader.h"

using namespace ptprof;
using namespace ptprof::pt;

namespace {

// Bytes that are mostly packets: opcodes of every kind with random payloads, and PSBs.
std::vector<uint8_t> PacketishBytes(std::mt19937& random, size_t size) {
  static const uint8_t kOpcodes[] = {0x00, 0x02, 0x0d, 0x2d, 0x4d, 0x6d, 0xcd, 0x1d, 0x3d, 0x7d,
                                     0xdd, 0x11, 0x71, 0x01, 0x21, 0x99, 0x19, 0x59, 0x03, 0x07,
                                     0x0b, 0x04, 0x06, 0x0c, 0x7e, 0xd9, 0xff};
  static const uint8_t kExtended[] = {0x82, 0xa3, 0x43, 0xf3, 0x23, 0x03, 0x73, 0x83, 0xc8, 0xc3,
                                      0x62, 0xe2, 0xc2, 0x22, 0xa2, 0x12, 0x32, 0x52, 0x92, 0x04};
  std::vector<uint8_t> out;
  while (out.size() < size) {
    const unsigned pick = random() % 10;
    if (pick == 0) {
      for (int i = 0; i < 8; ++i) {
        out.push_back(0x02);
        out.push_back(0x82);
      }
    } else if (pick < 4) {
      out.push_back(0x02);
      out.push_back(kExtended[random() % sizeof kExtended]);
      if (out.back() == 0xc3) out.push_back(random() % 2 ? 0x88 : static_cast<uint8_t>(random()));
    } else {
      out.push_back(kOpcodes[random() % sizeof kOpcodes]);
    }
    for (unsigned n = random() % 9; n > 0; --n) out.push_back(static_cast<uint8_t>(random()));
  }
  out.resize(size);
  return out;
}

}  // namespace

TEST_CASE("Packets read as libipt's packet decoder reads them, at every offset", "[packet_scan]") {
  std::mt19937 random(3);
  size_t compared = 0;
  for (int buffer = 0; buffer < 40; ++buffer) {
    const std::vector<uint8_t> bytes = PacketishBytes(random, 600);
    auto reader = PacketReader::Create(bytes, PtParams{});
    REQUIRE(reader);
    for (uint64_t offset = 0; offset < bytes.size(); ++offset) {
      DecodeError error;
      if (reader->SyncSet(offset, error) != ReadStatus::kOk) continue;
      Packet want;
      uint64_t at = 0;
      const ReadStatus status = reader->Next(want, at, error);
      const uint8_t* pos = bytes.data() + offset;
      PacketKind kind;
      int size = fast::FetchKind(pos, bytes.data(), bytes.data() + bytes.size(), kind);
      PacketKind inline_kind;
      REQUIRE(fast::FetchKindInline(pos, bytes.data(), bytes.data() + bytes.size(),
                                    inline_kind) == size);
      if (size == 0) REQUIRE(inline_kind == kind);
      Packet got;
      if (size == 0) size = fast::ReadPacket(kind, pos, bytes.data() + bytes.size(), got);
      INFO("buffer " << buffer << " offset " << offset);
      if (status == ReadStatus::kEnd) {  // a packet cut by the end of the buffer
        REQUIRE(size == -pte_eos);
        continue;
      }
      if (status == ReadStatus::kError) {
        REQUIRE(size == error.code);
        continue;
      }
      REQUIRE(size == want.size);
      REQUIRE(got.kind == want.kind);
      REQUIRE(PacketName(got) == PacketName(want));
      REQUIRE(PacketPayloadText(got) == PacketPayloadText(want));
      ++compared;
    }
  }
  CHECK(compared > 10000);
}

TEST_CASE("The PSB search finds what libipt's finds, at every alignment", "[packet_scan]") {
  std::mt19937 random(5);
  size_t found_some = 0;
  for (int round = 0; round < 200; ++round) {
    std::vector<uint8_t> storage = PacketishBytes(random, 300);
    // A view starting at any byte of an allocation: the search looks at words aligned in memory.
    const size_t shift = random() % 8;
    const std::span<const uint8_t> bytes(storage.data() + shift, storage.size() - shift);
    const uint8_t* begin = bytes.data();
    const uint8_t* end = begin + bytes.size();
    // Where libipt's search from a fresh decoder lands, and from each offset libipt's decoder
    // was set to (it then searches from the byte after).
    auto fresh = PacketReader::Create(bytes, PtParams{});
    REQUIRE(fresh);
    DecodeError error;
    const uint8_t* sync = nullptr;
    int found = fast::FindPsbForward(begin, begin, end, sync);
    if (fresh->SyncForward(error) == ReadStatus::kOk) {
      REQUIRE(found == 0);
      CHECK(static_cast<uint64_t>(sync - begin) == fresh->Offset());
      ++found_some;
    } else {
      CHECK(found < 0);
    }
    for (uint64_t from = 0; from < bytes.size(); from += 1 + random() % 20) {
      auto reader = PacketReader::Create(bytes, PtParams{});
      REQUIRE(reader);
      REQUIRE(reader->SyncSet(from, error) == ReadStatus::kOk);
      INFO("round " << round << " from " << from << " shift " << shift);
      found = fast::FindPsbForward(begin + from + 1, begin, end, sync);
      if (reader->SyncForward(error) == ReadStatus::kOk) {
        REQUIRE(found == 0);
        CHECK(static_cast<uint64_t>(sync - begin) == reader->Offset());
      } else {
        CHECK(found < 0);
      }
    }
  }
  CHECK(found_some > 100);
}

TEST_CASE("The inline packet kind agrees with FetchKind at every first byte and edge",
          "[packet_scan]") {
  for (unsigned first = 0; first < 256; ++first) {
    for (unsigned second : {0x00u, 0x03u, 0x23u, 0x82u, 0xa3u, 0xc3u, 0xc8u, 0x12u}) {
      const uint8_t bytes[3] = {static_cast<uint8_t>(first), static_cast<uint8_t>(second), 0x88};
      for (size_t length = 0; length <= 3; ++length) {
        INFO("first " << first << " second " << second << " length " << length);
        PacketKind want = PacketKind::kInvalid, got = PacketKind::kInvalid;
        const int status = fast::FetchKind(bytes, bytes, bytes + length, want);
        REQUIRE(fast::FetchKindInline(bytes, bytes, bytes + length, got) == status);
        REQUIRE(got == want);
      }
    }
  }
  PacketKind kind;
  const uint8_t byte = 0x59;
  CHECK(fast::FetchKindInline(&byte + 1, &byte, &byte + 1, kind) == -pte_eos);
  CHECK(fast::FetchKindInline(nullptr, &byte, &byte + 1, kind) == -pte_nosync);
  CHECK(fast::RoleOf(PacketKind::kMtc) == fast::kRoleTiming);
  CHECK(fast::RoleOf(PacketKind::kOvf) == (fast::kRolePsbEnd | fast::kRoleEvent));
}
