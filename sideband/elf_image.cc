#include "sideband/elf_image.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

namespace ptprof {

namespace {

// Owns the descriptor and the libelf handle of one open file.
class ElfFile {
 public:
  ~ElfFile() {
    if (elf_) elf_end(elf_);
    if (fd_ >= 0) close(fd_);
  }
  Status Open(const std::string& file) {
    fd_ = open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) return Fail(file + ": cannot open: " + std::strerror(errno));
    elf_version(EV_CURRENT);
    elf_ = elf_begin(fd_, ELF_C_READ, nullptr);
    if (!elf_ || elf_kind(elf_) != ELF_K_ELF) return Fail(file + ": not an ELF file");
    return {};
  }
  Elf* get() const { return elf_; }

 private:
  int fd_ = -1;
  Elf* elf_ = nullptr;
};

void ReadSymbols(Elf* elf, ElfImage& image) {
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(elf, scn)) != nullptr) {
    GElf_Shdr shdr;
    if (!gelf_getshdr(scn, &shdr)) continue;
    if (shdr.sh_type != SHT_SYMTAB && shdr.sh_type != SHT_DYNSYM) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (!data || shdr.sh_entsize == 0) continue;
    size_t count = shdr.sh_size / shdr.sh_entsize;
    // At most as many as the section's data holds (a damaged header may claim any size).
    image.symbols.reserve(image.symbols.size() + std::min(count, data->d_size / shdr.sh_entsize));
    for (size_t i = 0; i < count; ++i) {
      GElf_Sym sym;
      if (!gelf_getsym(data, static_cast<int>(i), &sym)) continue;
      int type = GELF_ST_TYPE(sym.st_info);
      if (type != STT_FUNC && type != STT_NOTYPE && type != STT_OBJECT && type != STT_GNU_IFUNC)
        continue;
      if (sym.st_shndx == SHN_UNDEF || sym.st_shndx == SHN_ABS || sym.st_value == 0) continue;
      const char* name = elf_strptr(elf, shdr.sh_link, sym.st_name);
      if (!name || !*name) continue;
      uint64_t address = sym.st_value + image.bias;
      // Only symbols inside a loaded segment can name a traced address.
      for (const ElfSegment& seg : image.segments) {
        if (address >= seg.address && address - seg.address < seg.file_size) {
          image.symbols.push_back(Symbol{name, address, sym.st_size, seg.address + seg.file_size});
          break;
        }
      }
    }
  }
}

}  // namespace

Result<ElfImage> LoadElfImage(const std::string& file, uint64_t base) {
  ElfFile elf;
  if (auto st = elf.Open(file); !st) return tl::unexpected(st.error());
  size_t phnum = 0;
  if (elf_getphdrnum(elf.get(), &phnum) != 0) return Fail(file + ": cannot read program headers");
  std::vector<GElf_Phdr> loads;
  uint64_t min_address = UINT64_MAX;
  for (size_t i = 0; i < phnum; ++i) {
    GElf_Phdr phdr;
    if (!gelf_getphdr(elf.get(), static_cast<int>(i), &phdr))
      return Fail(file + ": cannot read program header " + std::to_string(i));
    if (phdr.p_type != PT_LOAD) continue;
    min_address = std::min<uint64_t>(min_address, phdr.p_vaddr);
    loads.push_back(phdr);
  }
  ElfImage image;
  image.file = file;
  image.bias = (base != 0 && min_address != UINT64_MAX) ? base - min_address : 0;
  for (const GElf_Phdr& phdr : loads) {
    if (phdr.p_filesz == 0) continue;
    image.segments.push_back(ElfSegment{phdr.p_offset, phdr.p_filesz, phdr.p_vaddr + image.bias,
                                        (phdr.p_flags & PF_X) != 0});
  }
  if (image.segments.empty()) return Fail(file + ": no loadable segments");
  ReadSymbols(elf.get(), image);
  return image;
}

}  // namespace ptprof
