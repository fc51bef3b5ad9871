#include "decoders/lbr/perf_branch_stack.h"

#include <algorithm>

#include <fmt/format.h>

#include "sideband/perf/perf_abi.h"

namespace ptprof {

BranchRecord BranchRecordOf(const perf::BranchEntry& entry) {
  BranchRecord r;
  r.from = entry.from;
  r.to = entry.to;
  r.mispred = entry.mispredicted();
  // Hardware without mispredict reporting leaves both bits clear; perf prints '-' then.
  r.has_mispred = entry.mispredicted() || entry.predicted();
  r.cycles = entry.cycles();
  // LBRs without cycle counting (before Skylake) report 0; only a non-zero count is known.
  r.has_cycles = entry.cycles() != 0;
  return r;
}

LbrEntryFlags LbrEntryFlagsOf(const perf::BranchEntry& entry) {
  LbrEntryFlags f;
  f.predicted = entry.predicted();
  f.in_tx = (entry.flags >> 2) & 1;
  f.abort = (entry.flags >> 3) & 1;
  f.type = static_cast<uint8_t>((entry.flags >> 20) & 0xf);
  return f;
}

bool HasBranchStacks(const perf::PerfData& data) {
  return std::any_of(data.attrs.begin(), data.attrs.end(), [](const perf::PerfAttr& a) {
    return (a.attr.sample_type & perf::kSampleBranchStack) != 0;
  });
}

Result<std::vector<LbrSample>> ReadPerfBranchStacks(const perf::PerfData& data) {
  if (!HasBranchStacks(data))
    return Fail(fmt::format("{}: no branch stacks: no event of the file samples "
                            "PERF_SAMPLE_BRANCH_STACK (record with perf record -b or -j)",
                            data.name));
  std::vector<LbrSample> out;
  for (size_t i = 0; i < data.samples.size(); ++i) {
    const perf::PerfSample& s = data.samples[i];
    const perf::PerfAttr* attr = data.AttrOf(s.id);
    if (attr && !(attr->attr.sample_type & perf::kSampleBranchStack)) continue;
    LbrSample lbr;
    lbr.sample.sample = out.size();
    lbr.sample.pid = s.id.pid.value_or(0);
    lbr.sample.tid = s.id.tid.value_or(0);
    lbr.sample.cpu = s.id.cpu ? static_cast<int32_t>(*s.id.cpu) : -1;
    lbr.sample.time_ns = s.id.time.value_or(0);
    lbr.sample.trace_offset = i < data.sample_offsets.size() ? data.sample_offsets[i] : 0;
    lbr.ip = s.ip;
    lbr.hw_idx = s.branch_hw_index;
    lbr.sample.branches.reserve(s.branch_stack.size());
    lbr.flags.reserve(s.branch_stack.size());
    for (auto it = s.branch_stack.rbegin(); it != s.branch_stack.rend(); ++it) {
      lbr.sample.branches.push_back(BranchRecordOf(*it));
      lbr.flags.push_back(LbrEntryFlagsOf(*it));
    }
    out.push_back(std::move(lbr));
  }
  return out;
}

}  // namespace ptprof
