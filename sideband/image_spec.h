#pragma once
// ImageSpec answers "which file is loaded where?" for one --raw or --elf command-line argument,
// spelled the way libipt's ptxed spells them:
//   --raw FILE:ADDR, --raw FILE:OFFSET:ADDR, --raw FILE:FROM-TO:ADDR (FROM-TO a file-offset range)
//   --elf FILE, --elf FILE:BASE (BASE relocates the lowest PT_LOAD segment to BASE)
// A ':' that does not introduce a number belongs to the file name.
#include <cstdint>
#include <string>

#include "src/model/result.h"

namespace ptprof {

struct RawImageSpec {
  std::string file;
  uint64_t file_offset = 0;
  uint64_t size = UINT64_MAX;  // UINT64_MAX: up to the end of the file
  uint64_t address = 0;
};

struct ElfImageSpec {
  std::string file;
  uint64_t base = 0;  // 0: load at the addresses in the program headers
};

Result<RawImageSpec> ParseRawImageSpec(const std::string& text);
Result<ElfImageSpec> ParseElfImageSpec(const std::string& text);

// "FILE[:FROM[-TO]]" as ptxed accepts it for --pt: the file and a byte range (size UINT64_MAX when
// open-ended).
struct FileRangeSpec {
  std::string file;
  uint64_t offset = 0;
  uint64_t size = UINT64_MAX;
};
Result<FileRangeSpec> ParseFileRangeSpec(const std::string& text);

}  // namespace ptprof
