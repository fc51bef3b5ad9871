#include "sideband/image_set.h"

#include <algorithm>
#include <cstring>

#include "sideband/elf_image.h"
#include "sideband/file_bytes.h"

namespace ptprof {

Status ImageSet::AddRaw(const RawImageSpec& spec) {
  auto whole = ReadFileBytes(spec.file);
  if (!whole) return tl::unexpected(whole.error());
  uint64_t file_size = whole->size();
  if (spec.file_offset >= file_size)
    return Fail(spec.file + ": offset " + std::to_string(spec.file_offset) +
                " is not inside the file (" + std::to_string(file_size) + " bytes)");
  uint64_t size = std::min<uint64_t>(spec.size, file_size - spec.file_offset);
  ImageSection section;
  section.file = spec.file;
  section.file_offset = spec.file_offset;
  section.size = size;
  section.address = spec.address;
  section.bytes.assign(whole->begin() + static_cast<long>(spec.file_offset),
                       whole->begin() + static_cast<long>(spec.file_offset + size));
  sections_.push_back(std::move(section));
  return {};
}

Status ImageSet::AddElf(const ElfImageSpec& spec) {
  auto elf = LoadElfImage(spec.file, spec.base);
  if (!elf) return tl::unexpected(elf.error());
  auto whole = ReadFileBytes(spec.file);
  if (!whole) return tl::unexpected(whole.error());
  for (const ElfSegment& seg : elf->segments) {
    if (seg.file_offset > whole->size() || seg.file_size > whole->size() - seg.file_offset)
      return Fail(spec.file + ": segment at file offset " + std::to_string(seg.file_offset) +
                  " extends past the end of the file");
    ImageSection section;
    section.file = spec.file;
    section.file_offset = seg.file_offset;
    section.size = seg.file_size;
    section.address = seg.address;
    section.bytes.assign(whole->begin() + static_cast<long>(seg.file_offset),
                         whole->begin() + static_cast<long>(seg.file_offset + seg.file_size));
    sections_.push_back(std::move(section));
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
