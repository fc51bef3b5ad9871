#pragma once
// ImageSet answers "which bytes and which symbol are at this address?" for the code images given
// on the command line (--raw and --elf), in the order they were given: a later image hides the
// part of an earlier one it overlaps, as in libipt's image. It keeps every section's file, offset
// and address so that a trace decoder can map the same files itself. Each file is mapped once
// (read-only, paged in as the decode reads code) and its sections are slices of the mapping: the
// code is neither copied into the heap nor read before it is needed.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sideband/image_spec.h"
#include "sideband/shared_bytes.h"
#include "sideband/symbol_table.h"
#include "sideband/visible_ranges.h"
#include "src/model/result.h"

namespace ptprof {

struct ImageSection {
  std::string file;
  uint64_t file_offset = 0;
  uint64_t size = 0;
  uint64_t address = 0;
  SharedBytes bytes;  // the section's contents: a slice of the file, mapped
};

class ImageSet {
 public:
  // Loads the bytes of a raw image. Fails (naming the file) when it cannot be read or the range
  // lies outside it. An open-ended range stops at the end of the file.
  Status AddRaw(const RawImageSpec& spec);
  // Loads the PT_LOAD segments and the symbols of an ELF file.
  Status AddElf(const ElfImageSpec& spec);

  const std::vector<ImageSection>& sections() const { return sections_; }

  // Copies up to `size` bytes at `address` from the image that maps it, stopping at the end of
  // that section. Returns the number of bytes copied (0: nothing mapped there).
  size_t Read(uint64_t address, uint8_t* out, size_t size) const;

  // "symbol+0xoff" for `address`, or "" when no symbol covers it.
  std::string Symbolize(uint64_t address) const { return symbols_.Describe(address); }
  const SymbolTable& symbols() const { return symbols_; }
  // A symbol that comes with no image (kernel symbols from a copy of /proc/kallsyms).
  void AddSymbol(Symbol symbol) { symbols_.Add(std::move(symbol)); }

 private:
  // Adds a section; it hides what it overlaps of the earlier ones.
  void AddSection(ImageSection section);

  // The mapping of `file`, made at its first section.
  Result<SharedBytes> Mapped(const std::string& file);
  // [offset, offset + size) of `file`, or the error ReadFileRange gives for a range outside it.
  Result<SharedBytes> FileRange(const std::string& file, uint64_t offset, uint64_t size);

  std::map<std::string, SharedBytes> files_;
  std::vector<ImageSection> sections_;  // later sections take precedence
  VisibleRanges visible_;               // ids: indices into sections_
  SymbolTable symbols_;
};

}  // namespace ptprof
