#include "decoders/etm/snapshot_memory.h"

#include <set>

#include "sideband/file_bytes.h"

namespace ptprof::etm {

Result<std::vector<MemoryImage>> LoadSnapshotMemory(const Snapshot& snapshot, const BufferPlan& plan,
                                                    std::vector<std::string>& warnings) {
  std::vector<MemoryImage> images;
  std::set<std::string> cores;
  for (const SourceConfig& s : plan.sources) {
    if (s.core.empty() || !cores.insert(s.core).second) continue;
    const SnapshotDevice* core = snapshot.Device(s.core);
    if (!core) continue;
    for (const MemoryDump& d : core->dumps) {
      if (!d.missing.empty()) {
        warnings.push_back(d.missing + " (its code is unknown to the decode)");
        continue;
      }
      auto bytes = ReadFileRange(d.file, d.offset, d.length.value_or(UINT64_MAX));
      if (!bytes) return Fail(d.where + ": " + bytes.error().message);
      if (d.length && bytes->size() < *d.length)
        return Fail(d.where + ": length " + std::to_string(*d.length) + " but '" + d.file +
                    "' has only " + std::to_string(bytes->size()) + " bytes after offset " +
                    std::to_string(d.offset));
      MemoryImage image;
      image.address = d.address;
      image.space = d.space;
      image.where = d.where;
      image.bytes = std::make_shared<const std::vector<uint8_t>>(std::move(*bytes));
      images.push_back(std::move(image));
    }
  }
  return images;
}

}  // namespace ptprof::etm
