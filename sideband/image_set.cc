#include "sideband/image_set.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <sys/stat.h>

#include "sideband/elf_image.h"
#include "sideband/file_bytes.h"

namespace ptprof {

namespace {

Result<uint64_t> FileSize(const std::string& file) {
  struct stat st {};
  if (stat(file.c_str(), &st) != 0) return Fail(file + ": cannot open: " + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) return Fail(file + ": is a directory, expected a file");
  return static_cast<uint64_t>(st.st_size);
}

}  // namespace

Status ImageSet::AddRaw(const RawImageSpec& spec) {
  auto file_size = FileSize(spec.file);
  if (!file_size) return tl::unexpected(file_size.error());
  if (spec.file_offset >= *file_size)
    return Fail(spec.file + ": offset " + std::to_string(spec.file_offset) +
                " is not inside the file (" + std::to_string(*file_size) + " bytes)");
  // A range reaching past the end of the file stops there, as libipt's image sections do.
  uint64_t size = std::min<uint64_t>(spec.size, *file_size - spec.file_offset);
  auto bytes = ReadFileRange(spec.file, spec.file_offset, size);
  if (!bytes) return tl::unexpected(bytes.error());
  sections_.push_back(ImageSection{spec.file, spec.file_offset, size, spec.address,
                                   std::move(*bytes)});
  return {};
}

Status ImageSet::AddElf(const ElfImageSpec& spec) {
  auto elf = LoadElfImage(spec.file, spec.base);
  if (!elf) return tl::unexpected(elf.error());
  for (const ElfSegment& seg : elf->segments) {
    auto bytes = ReadFileRange(spec.file, seg.file_offset, seg.file_size);
    if (!bytes) return tl::unexpected(bytes.error());
    sections_.push_back(ImageSection{spec.file, seg.file_offset, seg.file_size, seg.address,
                                     std::move(*bytes)});
  }
  for (Symbol& s : elf->symbols) symbols_.Add(std::move(s));
  return {};
}

size_t ImageSet::Read(uint64_t address, uint8_t* out, size_t size) const {
  for (auto it = sections_.rbegin(); it != sections_.rend(); ++it) {
    if (address < it->address || address - it->address >= it->size) continue;
    uint64_t at = address - it->address;
    size_t n = static_cast<size_t>(std::min<uint64_t>(size, it->size - at));
    // A later section may start inside this one: stop where it begins.
    for (auto later = sections_.rbegin(); later != it; ++later) {
      if (later->address > address && later->address - address < n)
        n = static_cast<size_t>(later->address - address);
    }
    std::memcpy(out, it->bytes.data() + at, n);
    return n;
  }
  return 0;
}

}  // namespace ptprof
