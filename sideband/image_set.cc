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

Result<SharedBytes> ImageSet::Mapped(const std::string& file) {
  if (auto it = files_.find(file); it != files_.end()) return it->second;
  auto bytes = SharedBytes::MapFile(file, SharedBytes::Access::kRandom);
  if (!bytes) return tl::unexpected(bytes.error());
  return files_.emplace(file, std::move(*bytes)).first->second;
}

Result<SharedBytes> ImageSet::FileRange(const std::string& file, uint64_t offset, uint64_t size) {
  auto whole = Mapped(file);
  if (!whole) return tl::unexpected(whole.error());
  const uint64_t file_size = whole->size();
  if (offset > file_size || size > file_size - offset)
    return Fail(file + ": wanted " + std::to_string(size) + " bytes at offset " +
                std::to_string(offset) + " but the file has " + std::to_string(file_size));
  return whole->Slice(offset, size);
}

Status ImageSet::AddRaw(const RawImageSpec& spec) {
  auto file_size = FileSize(spec.file);
  if (!file_size) return tl::unexpected(file_size.error());
  if (spec.file_offset >= *file_size)
    return Fail(spec.file + ": offset " + std::to_string(spec.file_offset) +
                " is not inside the file (" + std::to_string(*file_size) + " bytes)");
  // A range reaching past the end of the file stops there, as libipt's image sections do.
  uint64_t size = std::min<uint64_t>(spec.size, *file_size - spec.file_offset);
  auto bytes = FileRange(spec.file, spec.file_offset, size);
  if (!bytes) return tl::unexpected(bytes.error());
  AddSection(ImageSection{spec.file, spec.file_offset, size, spec.address, std::move(*bytes)});
  return {};
}

Status ImageSet::AddElf(const ElfImageSpec& spec) {
  auto elf = LoadElfImage(spec.file, spec.base);
  if (!elf) return tl::unexpected(elf.error());
  for (const ElfSegment& seg : elf->segments) {
    auto bytes = FileRange(spec.file, seg.file_offset, seg.file_size);
    if (!bytes) return tl::unexpected(bytes.error());
    AddSection(ImageSection{spec.file, seg.file_offset, seg.file_size, seg.address,
                            std::move(*bytes)});
  }
  symbols_.AddAll(std::move(elf->symbols));
  return {};
}

void ImageSet::AddSection(ImageSection section) {
  visible_.Add(section.address, section.size, sections_.size());
  sections_.push_back(std::move(section));
}

size_t ImageSet::Read(uint64_t address, uint8_t* out, size_t size) const {
  const VisibleRanges::Range* range = visible_.Find(address);
  if (!range) return 0;
  const ImageSection& section = sections_[range->id];
  // The range stops where the section ends or where a later section starts inside it.
  const size_t n = static_cast<size_t>(std::min<uint64_t>(size, range->end - address));
  std::memcpy(out, section.bytes.data() + (address - section.address), n);
  return n;
}

}  // namespace ptprof
