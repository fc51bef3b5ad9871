#include "sideband/build_id.h"

#include <cerrno>
#include <cstring>

#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

namespace ptprof {

namespace {

// Closes what ReadBuildId opened, whichever way it returns.
struct ElfHandle {
  int fd = -1;
  Elf* elf = nullptr;
  ~ElfHandle() {
    if (elf) elf_end(elf);
    if (fd >= 0) close(fd);
  }
};

std::string Hex(const uint8_t* bytes, size_t size) {
  static const char kHex[] = "0123456789abcdef";
  std::string text;
  for (size_t i = 0; i < size; ++i) {
    text += kHex[bytes[i] >> 4];
    text += kHex[bytes[i] & 0xf];
  }
  return text;
}

// The build-id in one block of notes, if it holds one.
std::optional<std::string> FindInNotes(Elf_Data* data) {
  if (!data || !data->d_buf) return std::nullopt;
  size_t offset = 0;
  GElf_Nhdr note;
  size_t name_at = 0, desc_at = 0;
  while (offset < data->d_size) {
    const size_t next = gelf_getnote(data, offset, &note, &name_at, &desc_at);
    if (next == 0) break;
    const auto* base = static_cast<const uint8_t*>(data->d_buf);
    if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 && note.n_descsz > 0 &&
        std::memcmp(base + name_at, "GNU", 4) == 0)
      return Hex(base + desc_at, note.n_descsz);
    offset = next;
  }
  return std::nullopt;
}

}  // namespace

Result<std::optional<std::string>> ReadBuildId(const std::string& file) {
  elf_version(EV_CURRENT);
  ElfHandle handle;
  handle.fd = open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (handle.fd < 0) return Fail(file + ": cannot open: " + std::strerror(errno));
  handle.elf = elf_begin(handle.fd, ELF_C_READ, nullptr);
  if (!handle.elf || elf_kind(handle.elf) != ELF_K_ELF)
    return Fail(file + ": offset 0x0: not an ELF file");
  // Sections first (the usual case), then PT_NOTE segments for files without section headers.
  for (Elf_Scn* scn = elf_nextscn(handle.elf, nullptr); scn; scn = elf_nextscn(handle.elf, scn)) {
    GElf_Shdr shdr;
    if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_NOTE) continue;
    if (auto id = FindInNotes(elf_getdata(scn, nullptr))) return id;
  }
  size_t phnum = 0;
  if (elf_getphdrnum(handle.elf, &phnum) != 0) return std::optional<std::string>();
  for (size_t i = 0; i < phnum; ++i) {
    GElf_Phdr phdr;
    if (!gelf_getphdr(handle.elf, static_cast<int>(i), &phdr) || phdr.p_type != PT_NOTE) continue;
    if (auto id = FindInNotes(elf_getdata_rawchunk(handle.elf, static_cast<int64_t>(phdr.p_offset),
                                                   phdr.p_filesz, ELF_T_NHDR)))
      return id;
  }
  return std::optional<std::string>();
}

}  // namespace ptprof
