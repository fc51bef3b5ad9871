#include "src/record/mapped_elfs.h"

#include <elf.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>

using namespace ptprof::record;

namespace {

// A minimal ELF64 file: a read-only PT_LOAD at 0, an executable one at file offset and address
// 0x1000, and PT_INTERP when `interp` is given.
std::string WriteElf(const std::string& name, uint16_t type, uint64_t entry,
                     const std::string& interp = "") {
  const std::string path = "/tmp/ptprof-mapped-elfs-" + std::to_string(getpid()) + "-" + name;
  Elf64_Ehdr eh{};
  std::memcpy(eh.e_ident, ELFMAG, SELFMAG);
  eh.e_ident[EI_CLASS] = ELFCLASS64;
  eh.e_ident[EI_DATA] = ELFDATA2LSB;
  eh.e_ident[EI_VERSION] = EV_CURRENT;
  eh.e_type = type;
  eh.e_machine = EM_X86_64;
  eh.e_version = EV_CURRENT;
  eh.e_entry = entry;
  eh.e_phoff = sizeof eh;
  eh.e_ehsize = sizeof eh;
  eh.e_phentsize = sizeof(Elf64_Phdr);
  eh.e_phnum = interp.empty() ? 2 : 3;
  const uint64_t vbase = type == ET_EXEC ? 0x400000 : 0;
  Elf64_Phdr ph[3] = {};
  ph[0] = {PT_LOAD, PF_R, 0, vbase, vbase, 0x200, 0x200, 0x1000};
  ph[1] = {PT_LOAD, PF_R | PF_X, 0x1000, vbase + 0x1000, vbase + 0x1000, 0x100, 0x100, 0x1000};
  ph[2] = {PT_INTERP, PF_R, 0x300, 0, 0, interp.size() + 1, interp.size() + 1, 1};
  std::string bytes(0x1100, '\0');
  std::memcpy(bytes.data(), &eh, sizeof eh);
  std::memcpy(bytes.data() + sizeof eh, ph, sizeof ph);
  std::memcpy(bytes.data() + 0x300, interp.c_str(), interp.size() + 1);
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path;
}

}  // namespace

TEST_CASE("mapped ELF files: the main program, its loader and the guest's mappings, with bases") {
  const std::string loader = WriteElf("loader", ET_DYN, 0x1080);
  const std::string main = WriteElf("main", ET_DYN, 0x1040, loader);
  const std::string lib = WriteElf("lib", ET_DYN, 0);
  const std::string exec = WriteElf("exec", ET_EXEC, 0x401000);
  // The main program's code (its executable segment, at 0x1000 in the file) is at 0x5500001000;
  // the first instruction ran at the loader's entry; the guest mapped the library's code.
  std::map<std::string, std::string> info = {{"binary", main}, {"start_code", "0x5500001000"}};
  std::vector<std::string> sideband = {
      "mmap 7 0x7f0000001000 0x1000 5 18 0x1000 " + lib,
      "mmap 7 0x7f0000005000 0x1000 5 18 0x1000 /nonexistent/lib.so",
      "mmap 7 0x401000 0x1000 5 18 0x1000 " + exec};
  auto elfs = FindMappedElfs(info, sideband, 0x7e0000001080);
  REQUIRE(elfs.size() == 4);
  CHECK(elfs[0].path == main);
  CHECK(elfs[0].base == 0x5500000000);
  CHECK(elfs[1].path == loader);
  CHECK(elfs[1].base == 0x7e0000000000);
  CHECK(elfs[2].path == lib);
  CHECK(elfs[2].base == 0x7f0000000000);
  CHECK(elfs[3].path == exec);
  CHECK(elfs[3].base == 0);  // ET_EXEC: where it was linked
  // A second mapping of a file at the same base is not listed twice.
  sideband.push_back(sideband[0]);
  CHECK(FindMappedElfs(info, sideband, 0x7e0000001080).size() == 4);
  for (const auto& path : {loader, main, lib, exec}) std::remove(path.c_str());
}

TEST_CASE("mapped ELF files: nothing for files that are not ELF or not there") {
  std::map<std::string, std::string> info = {{"binary", "/nonexistent"}, {"start_code", "0x1000"}};
  CHECK(FindMappedElfs(info, {"mmap 1 0x1000 0x1000 5 2 0 /proc/self/status", "garbage"}, 0)
            .empty());
}
