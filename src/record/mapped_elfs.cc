#include "src/record/mapped_elfs.h"

#include <elf.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>

namespace ptprof::record {

namespace {

// The few facts of an ELF64 file's headers that place it in memory.
struct ElfLayout {
  uint16_t type = 0;
  uint64_t entry = 0;
  std::string interp;
  uint64_t min_vaddr = UINT64_MAX;
  uint64_t min_exec_vaddr = UINT64_MAX;  // of the executable segments
  struct Load {
    uint64_t offset, vaddr;
  };
  std::vector<Load> loads;
};

std::optional<ElfLayout> ReadLayout(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  Elf64_Ehdr eh;
  if (!in.read(reinterpret_cast<char*>(&eh), sizeof eh)) return std::nullopt;
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_phentsize != sizeof(Elf64_Phdr))
    return std::nullopt;
  ElfLayout layout;
  layout.type = eh.e_type;
  layout.entry = eh.e_entry;
  for (uint16_t i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph;
    in.seekg(static_cast<std::streamoff>(eh.e_phoff + i * sizeof ph));
    if (!in.read(reinterpret_cast<char*>(&ph), sizeof ph)) return std::nullopt;
    if (ph.p_type == PT_LOAD) {
      layout.loads.push_back({ph.p_offset, ph.p_vaddr});
      layout.min_vaddr = std::min(layout.min_vaddr, ph.p_vaddr);
      if (ph.p_flags & PF_X) layout.min_exec_vaddr = std::min(layout.min_exec_vaddr, ph.p_vaddr);
    } else if (ph.p_type == PT_INTERP && ph.p_filesz > 1 && ph.p_filesz < 4096) {
      std::string text(ph.p_filesz, '\0');
      const auto at = in.tellg();
      in.seekg(static_cast<std::streamoff>(ph.p_offset));
      if (!in.read(text.data(), static_cast<std::streamsize>(text.size()))) return std::nullopt;
      in.seekg(at);
      layout.interp = text.c_str();
    }
  }
  if (layout.loads.empty()) return std::nullopt;
  return layout;
}

uint64_t Hex(const std::string& text) { return std::strtoull(text.c_str(), nullptr, 0); }

}  // namespace

std::vector<MappedElf> FindMappedElfs(const std::map<std::string, std::string>& info,
                                      const std::vector<std::string>& sideband, uint64_t first_ip) {
  std::vector<MappedElf> out;
  auto add = [&](const std::string& path, uint64_t base) {
    for (const MappedElf& e : out)
      if (e.path == path && e.base == base) return;
    out.push_back({path, base});
  };
  // A file whose `bias` moved it: its lowest segment is at bias + its lowest address; an ET_EXEC
  // file stays where it was linked (base 0 says so).
  auto base_of = [](const ElfLayout& layout, uint64_t bias) {
    return layout.type == ET_EXEC ? 0 : bias + layout.min_vaddr;
  };
  // QEMU's start_code is the main program's lowest executable segment as loaded (its `entry` is
  // the loader's entry point when there is a loader).
  auto binary = info.find("binary");
  auto start_code = info.find("start_code");
  if (binary != info.end() && start_code != info.end()) {
    if (auto main = ReadLayout(binary->second); main && main->min_exec_vaddr != UINT64_MAX) {
      add(binary->second, base_of(*main, Hex(start_code->second) - main->min_exec_vaddr));
      if (!main->interp.empty() && first_ip != 0)
        if (auto loader = ReadLayout(main->interp))
          add(main->interp, base_of(*loader, first_ip - loader->entry));
    }
  }
  for (const std::string& line : sideband) {
    // mmap TID ADDR LEN PROT FLAGS OFFSET PATH
    std::istringstream fields(line);
    std::string kind, tid, addr, len, prot, flags, offset, path;
    if (!(fields >> kind >> tid >> addr >> len >> prot >> flags >> offset) || kind != "mmap")
      continue;
    std::getline(fields >> std::ws, path);
    if (path.empty() || path[0] != '/') continue;
    auto layout = ReadLayout(path);
    if (!layout) continue;
    const uint64_t address = Hex(addr), file_offset = Hex(offset);
    for (const ElfLayout::Load& load : layout->loads) {
      if ((load.offset & ~uint64_t{0xfff}) != file_offset) continue;
      add(path, base_of(*layout, address - (load.vaddr & ~uint64_t{0xfff})));
      break;
    }
  }
  return out;
}

}  // namespace ptprof::record
