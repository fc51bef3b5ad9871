#include "decoders/lbr/autofdo_ranges.h"

#include <catch2/catch.hpp>

#include "decoders/lbr/perf_branch_stack.h"
#include "decoders/lbr/perf_mmap_offsets.h"
#include "sideband/file_bytes.h"

using namespace ptprof;

namespace {

BranchSample Sample(std::vector<std::pair<uint64_t, uint64_t>> oldest_first) {
  BranchSample s;
  for (auto [from, to] : oldest_first) s.branches.push_back({from, to});
  return s;
}

// Everything at 0x1000.. lies in the binary, at offset address - 0x1000.
BinaryOffset InBinary(uint32_t, uint64_t address) {
  if (address >= 0x1000 && address < 0x9000) return {true, address - 0x1000};
  return {false, address};
}

}  // namespace

TEST_CASE("ranges run from each record's target to the next record's branch") {
  AutoFdoProfile p;
  // Oldest first: 0x1010->0x1100, then 0x1120->0x1200, then 0x1230->0x1010.
  AddAutoFdoSample(Sample({{0x1010, 0x1100}, {0x1120, 0x1200}, {0x1230, 0x1010}}), 0x1234, InBinary,
                   {}, p);
  CHECK(p.addresses.at(0x234) == 1);
  CHECK(p.ranges.size() == 2);
  CHECK(p.ranges.at({0x100, 0x120}) == 1);
  CHECK(p.ranges.at({0x200, 0x230}) == 1);
  CHECK(p.branches.size() == 3);
  CHECK(p.branches.at({0x230, 0x10}) == 1);  // the newest counts though it starts no range
  CHECK(p.RangeCountSum() == 2);
  CHECK(p.ByteWeightedTotal() == 0x21 + 0x31);
}

TEST_CASE("backward, too long and foreign ranges are skipped; a repeated newest back edge is dropped") {
  AutoFdoProfile p;
  AddAutoFdoSample(Sample({{0x1010, 0x1300}, {0x1200, 0x1100}}), std::nullopt, InBinary, {}, p);
  CHECK(p.ranges.empty());
  CHECK(p.bogus_ranges == 1);
  AddAutoFdoSample(Sample({{0x1010, 0xa0000}, {0x1200, 0x1100}}), std::nullopt, InBinary, {}, p);
  CHECK(p.ranges.empty());  // the target lies outside the binary
  AutoFdoOptions options;
  options.dup_backedge_stride_limit = 0x50;
  AddAutoFdoSample(Sample({{0x1400, 0x1100}, {0x1400, 0x1100}}), std::nullopt, InBinary, options, p);
  CHECK(p.duplicates_dropped == 1);
  CHECK(p.ranges.empty());
}

// google/autofdo sample_reader_test.cc ReadLBR on the same file (its test sets the stride limit to
// 0x50): 134,622 ranges counted, 357 distinct, [0x4e80,0x4e8e] 1,134 times, total 5,383,657,
// addresses 0xfe0 x55 and 0x1005 x18.
TEST_CASE("test.lbr aggregates to AutoFDO's published counts") {
  const std::string path = std::string(SHARED_TESTDATA) + "/autofdo/testdata/test.lbr";
  if (!ReadFileRange(path, 0, 0)) {
    WARN("SKIP: " << path << " is absent");
    return;
  }
  auto data = perf::ReadPerfData(path, perf::PerfDataOptions{true});
  REQUIRE(data);
  auto samples = ReadPerfBranchStacks(*data);
  REQUIRE(samples);
  CHECK(samples->size() == 9232);
  PerfMmapOffsets mmaps(*data);
  auto offset_of = [&](uint32_t pid, uint64_t address) {
    auto at = mmaps.Find(pid, address);
    if (!at) return BinaryOffset{false, address};
    return BinaryOffset{SameBinary(at->file, "test.binary"), at->offset};
  };
  AutoFdoOptions options;
  options.dup_backedge_stride_limit = 0x50;
  AutoFdoProfile p;
  size_t records = 0;
  for (const LbrSample& s : *samples) {
    records += s.sample.branches.size();
    AddAutoFdoSample(s.sample, s.ip, offset_of, options, p);
  }
  CHECK(records == 9232 * 16);
  CHECK(p.RangeCountSum() == 134622);
  CHECK(p.ranges.size() == 357);
  CHECK(p.ranges.at({0x4e80, 0x4e8e}) == 1134);
  CHECK(p.ByteWeightedTotal() == 5383657);
  CHECK(p.addresses.at(0xfe0) == 55);
  CHECK(p.addresses.at(0x1005) == 18);
}
