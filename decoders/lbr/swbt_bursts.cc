#include "decoders/lbr/swbt_bursts.h"

#include <cstring>

#include <fmt/format.h>

namespace ptprof {

namespace {

template <class T>
T Load(const uint8_t* at) {
  T value;
  std::memcpy(&value, at, sizeof value);
  return value;
}

}  // namespace

Result<SwbtFileHeader> ForEachSwbtBurst(std::span<const uint8_t> bytes, const std::string& name,
                                        const std::function<void(const SwbtBurst&)>& visit) {
  if (bytes.size() < kSwbtFileHeaderSize)
    return Fail(fmt::format("{}: {} bytes, too short for the swbt file header ({} bytes)", name,
                            bytes.size(), kSwbtFileHeaderSize));
  if (std::memcmp(bytes.data(), kSwbtMagic, sizeof kSwbtMagic) != 0)
    return Fail(name + ": offset 0: not a swbt burst file (bad magic)");
  SwbtFileHeader header;
  header.version = Load<uint32_t>(bytes.data() + 8);
  header.pid = Load<uint32_t>(bytes.data() + 12);
  header.lbr_depth = Load<uint32_t>(bytes.data() + 16);
  header.sample_period_ns = Load<uint64_t>(bytes.data() + 24);
  if (header.version != kSwbtVersion)
    return Fail(fmt::format("{}: offset 8: swbt version {} (this ptprof reads {})", name,
                            header.version, kSwbtVersion));
  size_t at = kSwbtFileHeaderSize;
  uint64_t index = 0;
  SwbtBurst burst;
  while (at < bytes.size()) {
    if (bytes.size() - at < kSwbtBurstHeaderSize) break;  // cut short mid-write
    const uint8_t* p = bytes.data() + at;
    if (Load<uint32_t>(p) != kSwbtBurstMagic)
      return Fail(fmt::format("{}: offset {}: expected a burst record (magic BRST)", name, at));
    const uint16_t count = Load<uint16_t>(p + 4);
    const uint16_t reason = Load<uint16_t>(p + 6);
    if (count > kSwbtMaxDepth)
      return Fail(fmt::format("{}: offset {}: burst of {} branches (at most {})", name, at + 4,
                              count, kSwbtMaxDepth));
    if (reason >= static_cast<uint16_t>(SwbtEndReason::kCount))
      return Fail(fmt::format("{}: offset {}: unknown end reason {}", name, at + 6, reason));
    const size_t size = kSwbtBurstHeaderSize + size_t{count} * kSwbtBranchSize;
    if (bytes.size() - at < size) break;  // cut short mid-write
    burst.sample.sample = index++;
    burst.sample.pid = header.pid;
    burst.sample.tid = Load<uint32_t>(p + 8);
    burst.sample.cpu = -1;
    burst.sample.time_ns = Load<uint64_t>(p + 16);
    burst.sample.trace_offset = at;
    burst.start_pc = Load<uint64_t>(p + 24);
    burst.reason = static_cast<SwbtEndReason>(reason);
    burst.sample.branches.resize(count);
    for (uint16_t k = 0; k < count; ++k) {
      const uint8_t* b = p + kSwbtBurstHeaderSize + size_t{k} * kSwbtBranchSize;
      burst.sample.branches[k] = BranchRecord{};
      burst.sample.branches[k].from = Load<uint64_t>(b);
      burst.sample.branches[k].to = Load<uint64_t>(b + 8);
    }
    visit(burst);
    at += size;
  }
  return header;
}

Result<std::vector<BranchSample>> ReadSwbtBursts(std::span<const uint8_t> bytes,
                                                 const std::string& name) {
  std::vector<BranchSample> samples;
  auto header = ForEachSwbtBurst(bytes, name, [&](const SwbtBurst& burst) {
    if (!burst.sample.branches.empty()) samples.push_back(burst.sample);
  });
  if (!header) return tl::unexpected(header.error());
  return samples;
}

}  // namespace ptprof
