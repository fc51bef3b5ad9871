#pragma once
// AutoFdoProfile answers "how often did each straight-line address range and each taken branch of
// one binary execute, according to LBR samples?", aggregated the way AutoFDO's PerfDataSampleReader
// (google/autofdo sample_reader.cc) does it, so that its published numbers can be checked:
//   - per sample, the sample's ip counts once in `addresses` when it lies in the binary;
//   - the newest record {from,to} counts in `branches` when both ends lie in the binary;
//   - for every older record i (perf order: newest first, so record i is older than record i-1):
//     when its `to` lies in the binary, the range [to_i, from_{i-1}] counts once in `ranges`
//     (skipped as bogus when it runs backwards or spans more than 1 MiB), and {from_i, to_i} counts
//     in `branches` when its `from` lies in the binary too;
//   - the second-newest record is dropped when it repeats the newest one exactly and that record
//     jumps back by more than `dup_backedge_stride_limit` bytes (a Skylake LBR duplicate).
// In oldest-first order (BranchSample) the range of record k is [to_k, from_{k+1}]. Addresses are
// binary offsets: the caller maps each address through the sample's process mappings.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <utility>

#include "decoders/lbr/branch_record.h"

namespace ptprof {

// Where an address lies: whether in the binary being profiled, and its offset in the file that
// maps it (in_binary false: some other file, or unmapped with the address itself).
struct BinaryOffset {
  bool in_binary = false;
  uint64_t offset = 0;
};
using BinaryOffsetOf = std::function<BinaryOffset(uint32_t pid, uint64_t address)>;

struct AutoFdoOptions {
  uint64_t dup_backedge_stride_limit = 0x1000;  // AutoFDO's default (its unit test sets 0x50)
  uint64_t max_range_bytes = uint64_t{1} << 20;
};

struct AutoFdoProfile {
  std::map<std::pair<uint64_t, uint64_t>, uint64_t> ranges;    // [begin, end] -> count
  std::map<std::pair<uint64_t, uint64_t>, uint64_t> branches;  // {from, to} -> count
  std::map<uint64_t, uint64_t> addresses;                      // sample ip -> count
  uint64_t bogus_ranges = 0;       // backwards or longer than max_range_bytes
  uint64_t duplicates_dropped = 0;

  // The sum of all range counts (AutoFDO's GetTotalSampleCount when there are ranges).
  uint64_t RangeCountSum() const;
  // Sum of count * (1 + end - begin) over the ranges (AutoFDO's total count).
  uint64_t ByteWeightedTotal() const;
};

// Adds one sample (branches oldest first, `ip` its sampled ip if any).
void AddAutoFdoSample(const BranchSample& sample, std::optional<uint64_t> ip,
                      const BinaryOffsetOf& offset_of, const AutoFdoOptions& options,
                      AutoFdoProfile& profile);

}  // namespace ptprof
