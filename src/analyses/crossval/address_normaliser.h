#pragma once
// AddressNormaliser answers "which file, at which offset, holds the code at this address of this
// process?", so that branch records of two recordings of one program (different runs, different
// load addresses: PIE binaries load elsewhere natively than under QEMU) can be compared. A file is
// named by its base name (the same program's /usr/bin/gzip and a copy of it agree; build-ids are
// not recorded by every source). Each input normalises through its own sideband: a session's
// images (their sections' file offsets), perf.data mmaps, or /proc/PID/maps text.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "src/pipeline/session.h"

namespace ptprof {

struct NormalAddress {
  std::string image;  // base name of the file
  uint64_t offset = 0;
  bool operator==(const NormalAddress&) const = default;
};

std::string BaseNameOf(const std::string& path);

class AddressNormaliser {
 public:
  // One executable mapping: [start, start+len) of `pid` (-1: every process) maps `file` from
  // `file_offset`.
  void AddMapping(int64_t pid, uint64_t start, uint64_t len, uint64_t file_offset,
                  const std::string& file);
  // The mappings of a session's images: ELF and raw images with a real file (not QEMU's
  // "[qemu translated code]"), in every process.
  void AddSessionImages(const Session& session);
  // Lines of /proc/PID/maps ("start-end perms offset dev inode path"), executable ones only.
  void AddProcMaps(int64_t pid, const std::string& text);

  // The latest mapping of `pid` covering `address`, else any process's; nullopt when none does.
  std::optional<NormalAddress> Normalise(int64_t pid, uint64_t address) const;
  // The images (base names) it knows.
  std::vector<std::string> Images() const;
  bool empty() const { return mappings_.empty(); }

 private:
  struct Mapping {
    int64_t pid;
    uint64_t start, len, file_offset;
    std::string image;
  };
  std::vector<Mapping> mappings_;
};

}  // namespace ptprof
