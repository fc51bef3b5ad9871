#pragma once
// FindMappedElfs answers "which ELF files did the recorded program run code from, and where was
// each loaded?" from what the QEMU plugin saw: the main program (QEMU's info: its path and entry
// point), its dynamic loader (PT_INTERP; QEMU maps it, the guest never does: it is where the first
// instruction ran) and every executable file mapping the guest made (the sideband's mmap lines).
// The answer lets an archive carry the binaries with their load addresses, for symbols.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ptprof::record {

struct MappedElf {
  std::string path;
  uint64_t base = 0;  // where its lowest PT_LOAD segment was loaded (0: its link-time address)
};

// Files that cannot be read or are not ELF are left out; each (path, base) appears once, in the
// order main program, loader, mappings.
std::vector<MappedElf> FindMappedElfs(const std::map<std::string, std::string>& info,
                                      const std::vector<std::string>& sideband, uint64_t first_ip);

}  // namespace ptprof::record
