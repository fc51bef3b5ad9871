#include "decoders/lbr/swbt_bursts.h"

#include <cstring>

#include <catch2/catch.hpp>

namespace ptprof {
namespace {

template <class T>
void Put(std::vector<uint8_t>& out, T value) {
  uint8_t bytes[sizeof value];
  std::memcpy(bytes, &value, sizeof value);
  out.insert(out.end(), bytes, bytes + sizeof value);
}

std::vector<uint8_t> Header(uint32_t pid) {
  std::vector<uint8_t> out(kSwbtMagic, kSwbtMagic + 8);
  Put<uint32_t>(out, kSwbtVersion);
  Put<uint32_t>(out, pid);
  Put<uint32_t>(out, 16);
  Put<uint32_t>(out, 0);
  Put<uint64_t>(out, 1000000);
  return out;
}

void Burst(std::vector<uint8_t>& out, uint32_t tid, SwbtEndReason reason,
           const std::vector<std::pair<uint64_t, uint64_t>>& branches) {
  Put<uint32_t>(out, kSwbtBurstMagic);
  Put<uint16_t>(out, static_cast<uint16_t>(branches.size()));
  Put<uint16_t>(out, static_cast<uint16_t>(reason));
  Put<uint32_t>(out, tid);
  Put<uint32_t>(out, 0);
  Put<uint64_t>(out, 777);
  Put<uint64_t>(out, 0x1000);
  for (auto [from, to] : branches) {
    Put<uint64_t>(out, from);
    Put<uint64_t>(out, to);
  }
}

TEST_CASE("swbt bursts: complete and early bursts read back oldest first") {
  auto bytes = Header(42);
  Burst(bytes, 43, SwbtEndReason::kComplete, {{0x10, 0x20}, {0x24, 0x30}});
  Burst(bytes, 43, SwbtEndReason::kSyscall, {});
  Burst(bytes, 44, SwbtEndReason::kStackMismatch, {{0x40, 0x50}});
  std::vector<SwbtBurst> bursts;
  auto header = ForEachSwbtBurst(bytes, "f", [&](const SwbtBurst& b) { bursts.push_back(b); });
  REQUIRE(header);
  CHECK(header->pid == 42);
  CHECK(header->lbr_depth == 16);
  CHECK(header->sample_period_ns == 1000000);
  REQUIRE(bursts.size() == 3);
  CHECK(bursts[0].sample.tid == 43);
  CHECK(bursts[0].sample.pid == 42);
  CHECK(bursts[0].sample.time_ns == 777);
  CHECK(bursts[0].sample.trace_offset == kSwbtFileHeaderSize);
  CHECK(bursts[0].start_pc == 0x1000);
  REQUIRE(bursts[0].sample.branches.size() == 2);
  CHECK(bursts[0].sample.branches[1].from == 0x24);
  CHECK(bursts[0].sample.branches[1].to == 0x30);
  CHECK(bursts[1].reason == SwbtEndReason::kSyscall);
  CHECK(bursts[2].sample.sample == 2);
  auto samples = ReadSwbtBursts(bytes, "f");
  REQUIRE(samples);
  REQUIRE(samples->size() == 2);  // the empty burst is left out
  CHECK((*samples)[1].tid == 44);
}

TEST_CASE("swbt bursts: a record cut short ends the file; damage is an error with its offset") {
  auto bytes = Header(1);
  Burst(bytes, 2, SwbtEndReason::kComplete, {{1, 2}});
  auto cut = bytes;
  cut.resize(cut.size() - 3);
  auto samples = ReadSwbtBursts(cut, "f");
  REQUIRE(samples);
  CHECK(samples->empty());
  bytes[kSwbtFileHeaderSize] ^= 1;
  auto bad = ReadSwbtBursts(bytes, "f");
  REQUIRE(!bad);
  CHECK(bad.error().message == "f: offset 32: expected a burst record (magic BRST)");
  std::vector<uint8_t> not_swbt(40, 0);
  REQUIRE(!ReadSwbtBursts(not_swbt, "g"));
  CHECK(!ReadSwbtBursts(std::vector<uint8_t>(5, 0), "g"));
  CHECK(std::string(SwbtEndReasonName(SwbtEndReason::kRseq)) == "rseq");
}

}  // namespace
}  // namespace ptprof
