#pragma once
// PerfMmapOffsets answers "which file maps this address in this process, and at which offset of
// that file?" from a perf.data's executable MMAP/MMAP2 records, the question AutoFDO-style
// aggregation asks of every LBR address (offset = address - mapping start + pgoff, as perf's and
// quipper's DSO offsets are). A process with no mapping of its own (a child that inherited its
// parent's) is looked up in every process's mappings.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sideband/perf/perf_data.h"

namespace ptprof {

struct MappedFileOffset {
  std::string file;  // as the MMAP record names it
  uint64_t offset = 0;
};

class PerfMmapOffsets {
 public:
  explicit PerfMmapOffsets(const perf::PerfData& data);

  // The latest executable mapping of `pid` that covers `address`, else any process's.
  std::optional<MappedFileOffset> Find(uint32_t pid, uint64_t address) const;
  // The file names of every executable mapping, once each, in order of appearance.
  std::vector<std::string> Files() const;

 private:
  struct Mapping {
    uint32_t pid = 0;
    uint64_t start = 0, len = 0, pgoff = 0;
    std::string file;
  };
  std::vector<Mapping> mappings_;  // in record order
};

// True when `file` (a mapping's name) is the binary `wanted`: the same path or the same base
// name.
bool SameBinary(const std::string& file, const std::string& wanted);

}  // namespace ptprof
