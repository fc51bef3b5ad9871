#include "src/record/swbt/snapshot_windows.h"

#include <cstring>

#include <catch2/catch.hpp>

namespace sw = ptprof::record::swbt;

namespace {

void Put(std::vector<uint8_t>& out, const void* p, size_t n) {
  const auto* b = static_cast<const uint8_t*>(p);
  out.insert(out.end(), b, b + n);
}

// A burst file with records (tid, time, branch count).
std::vector<uint8_t> File(const std::vector<std::tuple<uint32_t, uint64_t, uint16_t>>& records) {
  std::vector<uint8_t> out(32, 0);
  std::memcpy(out.data(), "PTSWBT\0\1", 8);
  for (const auto& [tid, time, count] : records) {
    const uint32_t magic = 0x54535242, reserved = 0;
    const uint16_t reason = 0;
    const uint64_t pc = 0x1000;
    Put(out, &magic, 4);
    Put(out, &count, 2);
    Put(out, &reason, 2);
    Put(out, &tid, 4);
    Put(out, &reserved, 4);
    Put(out, &time, 8);
    Put(out, &pc, 8);
    for (uint16_t i = 0; i < count; ++i) {
      const uint64_t from = 0x1000 + i, to = 0x2000 + i;
      Put(out, &from, 8);
      Put(out, &to, 8);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("IndexBurstRecords finds every whole record and names damage") {
  auto bytes = File({{1, 100, 2}, {2, 50, 1}, {1, 300, 0}});
  auto records = sw::IndexBurstRecords(bytes, "b.swbt");
  REQUIRE(records);
  REQUIRE(records->size() == 3);
  CHECK((*records)[0].offset == 32);
  CHECK((*records)[0].size == 32 + 32);
  CHECK((*records)[1].time_ns == 50);
  CHECK((*records)[2].tid == 1);
  bytes.resize(bytes.size() - 1);  // the last record cut short
  REQUIRE(sw::IndexBurstRecords(bytes, "b.swbt")->size() == 2);
  bytes[32] = 0;
  auto bad = sw::IndexBurstRecords(bytes, "b.swbt");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message.find("b.swbt: offset 0x20") == 0);
}

TEST_CASE("RingAtCut keeps the newest records before the cut that fit") {
  // Sizes: 64, 48, 32, 48 bytes at times 10, 20, 30, 40 (file order differs from time order).
  auto bytes = File({{1, 20, 1}, {1, 10, 2}, {2, 40, 1}, {2, 30, 0}});
  auto records = sw::IndexBurstRecords(bytes, "b");
  REQUIRE(records);
  CHECK(sw::RingAtCut(*records, 35, 1000) == std::vector<size_t>{1, 0, 3});
  CHECK(sw::RingAtCut(*records, 35, 80) == std::vector<size_t>{0, 3});  // 32 + 48 fit, +64 not
  CHECK(sw::RingAtCut(*records, 35, 31).empty());
  CHECK(sw::RingAtCut(*records, 5, 1000).empty());
  CHECK(sw::RingAtCut(*records, 40, 48) == std::vector<size_t>{2});
  const auto snapshot = sw::SnapshotFile(bytes, *records, {0, 3});
  CHECK(snapshot.size() == 32 + 48 + 32);
  auto again = sw::IndexBurstRecords(snapshot, "s");
  REQUIRE(again);
  REQUIRE(again->size() == 2);
  CHECK((*again)[0].time_ns == 20);
  CHECK((*again)[1].time_ns == 30);
}
