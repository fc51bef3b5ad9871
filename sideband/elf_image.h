#pragma once
// ElfImage answers "what does this ELF file put in memory, and which symbols does it name?": its
// loadable (PT_LOAD) segments with file contents, relocated the way libipt's ptxed relocates
// `--elf FILE:BASE` (the lowest PT_LOAD address moves to BASE), and its .symtab/.dynsym symbols.
#include <cstdint>
#include <string>
#include <vector>

#include "sideband/symbol_table.h"
#include "src/model/result.h"

namespace ptprof {

struct ElfSegment {
  uint64_t file_offset = 0;
  uint64_t file_size = 0;  // bytes backed by the file (p_filesz)
  uint64_t address = 0;    // relocated virtual address
  bool executable = false;
};

struct ElfImage {
  std::string file;
  uint64_t bias = 0;  // added to every address in the file
  std::vector<ElfSegment> segments;
  std::vector<Symbol> symbols;  // relocated; limit = end of the segment holding the symbol
};

// Loads `file`; `base` 0 keeps the link-time addresses. Errors name the file.
Result<ElfImage> LoadElfImage(const std::string& file, uint64_t base);

}  // namespace ptprof
