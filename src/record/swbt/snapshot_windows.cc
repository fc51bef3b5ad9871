#include "src/record/swbt/snapshot_windows.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

namespace ptprof::record::swbt {

namespace {
constexpr uint64_t kFileHeader = 32;
constexpr uint64_t kRecordHeader = 32;
constexpr uint64_t kBranchBytes = 16;
constexpr uint32_t kRecordMagic = 0x54535242;  // "BRST"
}  // namespace

Result<std::vector<BurstRecordRef>> IndexBurstRecords(std::span<const uint8_t> bytes,
                                                      const std::string& name) {
  if (bytes.size() < kFileHeader) return Fail(name + ": offset 0x0: shorter than a file header");
  std::vector<BurstRecordRef> records;
  uint64_t at = kFileHeader;
  while (at + kRecordHeader <= bytes.size()) {
    uint32_t magic = 0, tid = 0;
    uint16_t count = 0;
    uint64_t time = 0;
    std::memcpy(&magic, &bytes[at], 4);
    std::memcpy(&count, &bytes[at + 4], 2);
    std::memcpy(&tid, &bytes[at + 8], 4);
    std::memcpy(&time, &bytes[at + 16], 8);
    if (magic != kRecordMagic)
      return Fail(fmt::format("{}: offset {:#x}: not a burst record (magic {:#x})", name, at, magic));
    const uint64_t size = kRecordHeader + kBranchBytes * count;
    if (at + size > bytes.size()) break;  // cut short: the process died while writing
    records.push_back(BurstRecordRef{at, size, time, tid});
    at += size;
  }
  return records;
}

std::vector<size_t> RingAtCut(const std::vector<BurstRecordRef>& records, uint64_t cut_ns,
                              uint64_t pre_bytes) {
  // Records are in file order, which is per-thread write order, not time order across threads:
  // take the records at or before the cut by time, newest first.
  std::vector<size_t> before;
  for (size_t i = 0; i < records.size(); ++i)
    if (records[i].time_ns <= cut_ns) before.push_back(i);
  std::stable_sort(before.begin(), before.end(), [&](size_t a, size_t b) {
    return records[a].time_ns > records[b].time_ns;
  });
  std::vector<size_t> chosen;
  uint64_t used = 0;
  for (size_t i : before) {
    if (used + records[i].size > pre_bytes) break;
    used += records[i].size;
    chosen.push_back(i);
  }
  std::sort(chosen.begin(), chosen.end(), [&](size_t a, size_t b) {
    return records[a].time_ns != records[b].time_ns ? records[a].time_ns < records[b].time_ns
                                                    : a < b;
  });
  return chosen;
}

std::vector<uint8_t> SnapshotFile(std::span<const uint8_t> bytes,
                                  const std::vector<BurstRecordRef>& records,
                                  const std::vector<size_t>& chosen) {
  std::vector<uint8_t> out(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(kFileHeader));
  for (size_t i : chosen) {
    const auto first = bytes.begin() + static_cast<std::ptrdiff_t>(records[i].offset);
    out.insert(out.end(), first, first + static_cast<std::ptrdiff_t>(records[i].size));
  }
  return out;
}

}  // namespace ptprof::record::swbt
