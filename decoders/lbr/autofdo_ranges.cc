#include "decoders/lbr/autofdo_ranges.h"

namespace ptprof {

uint64_t AutoFdoProfile::RangeCountSum() const {
  uint64_t sum = 0;
  for (const auto& [range, count] : ranges) sum += count;
  return sum;
}

uint64_t AutoFdoProfile::ByteWeightedTotal() const {
  uint64_t sum = 0;
  for (const auto& [range, count] : ranges) sum += count * (1 + range.second - range.first);
  return sum;
}

void AddAutoFdoSample(const BranchSample& sample, std::optional<uint64_t> ip,
                      const BinaryOffsetOf& offset_of, const AutoFdoOptions& options,
                      AutoFdoProfile& profile) {
  const uint32_t pid = sample.pid;
  if (ip) {
    BinaryOffset at = offset_of(pid, *ip);
    if (at.in_binary) ++profile.addresses[at.offset];
  }
  const size_t n = sample.branches.size();
  if (n == 0) return;
  // perf order: newest(0) is the last of the oldest-first list.
  auto newest = [&](size_t i) -> const BranchRecord& { return sample.branches[n - 1 - i]; };
  BinaryOffset from0 = offset_of(pid, newest(0).from);
  BinaryOffset to0 = offset_of(pid, newest(0).to);
  if (from0.in_binary && to0.in_binary) ++profile.branches[{from0.offset, to0.offset}];
  for (size_t i = 1; i < n; ++i) {
    BinaryOffset to = offset_of(pid, newest(i).to);
    if (!to.in_binary) continue;
    if (i == 1) {
      BinaryOffset from1 = offset_of(pid, newest(1).from);
      if (from0.offset == from1.offset && to0.offset == to.offset &&
          from0.offset - to0.offset > options.dup_backedge_stride_limit) {
        ++profile.duplicates_dropped;
        continue;
      }
    }
    const uint64_t begin = to.offset;
    const uint64_t end = offset_of(pid, newest(i - 1).from).offset;
    if (end < begin || end - begin > options.max_range_bytes) {
      ++profile.bogus_ranges;
      continue;
    }
    ++profile.ranges[{begin, end}];
    BinaryOffset from = offset_of(pid, newest(i).from);
    if (from.in_binary) ++profile.branches[{from.offset, to.offset}];
  }
}

}  // namespace ptprof
