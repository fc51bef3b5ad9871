#pragma once
// ProcMaps answers "which files did the traced process map as code, and where?" from the
// /proc/PID/maps snapshots the tracer takes, so that the recorder can put those ELF files (by
// build-id, with their load base) into the archive and a checker can find the bytes at an address.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ptprof::swbt {

struct MapsLine {
  uint64_t start = 0, end = 0, offset = 0;
  std::string perms;  // "r-xp"
  std::string path;   // empty for anonymous memory; "[vdso]" etc. for special mappings
};

// Lines that do not parse are skipped.
std::vector<MapsLine> ParseProcMaps(std::string_view text);

struct MappedFile {
  std::string path;
  uint64_t base = 0;  // where the file's offset 0 is mapped (start - offset of its first mapping)
};

// Files ("/...") with at least one executable mapping, in order of first mapping, each once.
std::vector<MappedFile> ExecutableFiles(const std::vector<MapsLine>& lines);

// The mapping that holds `address`, or nullptr.
const MapsLine* FindMapping(const std::vector<MapsLine>& lines, uint64_t address);

}  // namespace ptprof::swbt
