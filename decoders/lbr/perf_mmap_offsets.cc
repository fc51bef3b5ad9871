#include "decoders/lbr/perf_mmap_offsets.h"

#include <algorithm>
#include <variant>

namespace ptprof {

namespace {

std::string BaseName(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

PerfMmapOffsets::PerfMmapOffsets(const perf::PerfData& data) {
  for (const perf::PerfRecord& record : data.sideband) {
    const auto* mmap = std::get_if<perf::MmapRecord>(&record.body);
    if (!mmap || !mmap->executable || mmap->len == 0) continue;
    mappings_.push_back({mmap->pid, mmap->addr, mmap->len, mmap->pgoff, mmap->filename});
  }
}

std::optional<MappedFileOffset> PerfMmapOffsets::Find(uint32_t pid, uint64_t address) const {
  const Mapping* any = nullptr;
  for (auto it = mappings_.rbegin(); it != mappings_.rend(); ++it) {
    if (address < it->start || address - it->start >= it->len) continue;
    if (it->pid == pid) return MappedFileOffset{it->file, address - it->start + it->pgoff};
    if (!any) any = &*it;
  }
  if (any) return MappedFileOffset{any->file, address - any->start + any->pgoff};
  return std::nullopt;
}

std::vector<std::string> PerfMmapOffsets::Files() const {
  std::vector<std::string> files;
  for (const Mapping& m : mappings_)
    if (std::find(files.begin(), files.end(), m.file) == files.end()) files.push_back(m.file);
  return files;
}

bool SameBinary(const std::string& file, const std::string& wanted) {
  return file == wanted || BaseName(file) == BaseName(wanted);
}

}  // namespace ptprof
