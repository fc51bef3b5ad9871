#include "decoders/lbr/perf_branch_stack.h"

#include <catch2/catch.hpp>

#include "sideband/perf/perf_abi.h"
#include "sideband/perf/perf_test_bytes.h"

using namespace ptprof;
using namespace ptprof::perf;
using namespace ptprof::perf::testing;

namespace {

// A sample with ip, tid, time, cpu and a branch stack of `entries` {from, to, flags}, newest first.
std::vector<uint8_t> BranchSampleRecord(uint64_t ip, uint32_t pid, uint32_t tid, uint64_t time,
                                        uint32_t cpu, std::optional<uint64_t> hw_idx,
                                        const std::vector<std::array<uint64_t, 3>>& entries) {
  Bytes b;
  b.U64(ip).U32(pid).U32(tid).U64(time).U32(cpu).U32(0).U64(entries.size());
  if (hw_idx) b.U64(*hw_idx);
  for (const auto& e : entries) b.U64(e[0]).U64(e[1]).U64(e[2]);
  return Record(kRecordSample, 0, b.data);
}

constexpr uint64_t kType = kSampleIp | kSampleTid | kSampleTime | kSampleCpu | kSampleBranchStack;

}  // namespace

TEST_CASE("branch stacks turn oldest first, with the sample's ids, flags and hw_idx") {
  Bytes records;
  // flags: mispred (bit 0), predicted (1), in_tx (2), abort (3), cycles 4..19, type 20..23.
  records.Append(BranchSampleRecord(0x4010, 7, 8, 1000, 3, 5,
                                    {{0x4100, 0x4200, 1 | (12u << 4)},       // newest
                                     {0x4000, 0x4050, 2 | 4 | (3u << 20)}}));  // oldest
  records.Append(BranchSampleRecord(0x4020, 7, 9, 2000, 1, 6, {}));
  auto file = FileMode({Attr(4, 0, kType, false, kBranchHwIndex), {}, records.data, {}});
  auto data = ParsePerfData(file, "lbr.data", PerfDataOptions{true});
  REQUIRE(data);
  auto samples = ReadPerfBranchStacks(*data);
  REQUIRE(samples);
  REQUIRE(samples->size() == 2);
  const LbrSample& first = (*samples)[0];
  CHECK(first.sample.sample == 0);
  CHECK(first.sample.pid == 7);
  CHECK(first.sample.tid == 8);
  CHECK(first.sample.time_ns == 1000);
  CHECK(first.sample.cpu == 3);
  CHECK(first.sample.trace_offset == data->sample_offsets[0]);
  CHECK(*first.ip == 0x4010);
  CHECK(*first.hw_idx == 5);
  REQUIRE(first.sample.branches.size() == 2);
  CHECK(first.sample.branches[0].from == 0x4000);  // oldest first
  CHECK(first.sample.branches[0].to == 0x4050);
  CHECK_FALSE(first.sample.branches[0].mispred);
  CHECK(first.sample.branches[0].has_mispred);
  CHECK(first.flags[0].predicted);
  CHECK(first.flags[0].in_tx);
  CHECK_FALSE(first.flags[0].abort);
  CHECK(first.flags[0].type == 3);
  CHECK(first.sample.branches[1].from == 0x4100);
  CHECK(first.sample.branches[1].mispred);
  CHECK(first.sample.branches[1].has_cycles);
  CHECK(first.sample.branches[1].cycles == 12);
  CHECK((*samples)[1].sample.branches.empty());
  CHECK((*samples)[1].sample.sample == 1);
}

TEST_CASE("a perf.data without branch stacks is refused, naming the file") {
  Bytes b;
  b.U64(0x4010).U32(1).U32(1).U64(5).U32(0).U32(0);
  auto file = FileMode({Attr(0, 0, kSampleIp | kSampleTid | kSampleTime | kSampleCpu, false), {},
                        Record(kRecordSample, 0, b.data), {}});
  auto data = ParsePerfData(file, "cycles.data", PerfDataOptions{true});
  REQUIRE(data);
  auto samples = ReadPerfBranchStacks(*data);
  REQUIRE_FALSE(samples);
  CHECK(samples.error().message.find("cycles.data: no branch stacks") == 0);
}
