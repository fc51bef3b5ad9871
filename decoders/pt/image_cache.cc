#include "decoders/pt/image_cache.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>

namespace ptprof::pt {

PtImageCache::PtImageCache()
    : iscache_(pt_iscache_alloc(nullptr)), image_(pt_image_alloc(nullptr)) {}

PtImageCache::~PtImageCache() {
  for (pt_image* image : more_) pt_image_free(image);
  pt_image_free(image_);
  pt_iscache_free(iscache_);
}

Status PtImageCache::Add(const ImageSection& section) { return Add(section, 0); }

size_t PtImageCache::AddImage() {
  more_.push_back(pt_image_alloc(nullptr));
  visible_.emplace_back();
  return more_.size();
}

Status PtImageCache::Add(const ImageSection& section, size_t image_index) {
  pt_image* target = image_index <= more_.size() ? image(image_index) : nullptr;
  if (!iscache_ || !target) return Fail("out of memory for the image");
  int isid = pt_iscache_add_file(iscache_, section.file.c_str(), section.file_offset,
                                 section.size, section.address);
  int status = isid < 0 ? isid : pt_image_add_cached(target, iscache_, isid, nullptr);
  if (status < 0) {
    char where[32];
    std::snprintf(where, sizeof where, "0x%" PRIx64, section.address);
    return Fail(section.file + ": cannot map at " + where + ": " + pt_errstr(pt_errcode(status)));
  }
  if (section.size > 0 && section.bytes.size() == section.size) {
    if (bytes_.size() <= static_cast<size_t>(isid)) bytes_.resize(static_cast<size_t>(isid) + 1);
    bytes_[static_cast<size_t>(isid)] = Bytes{section.bytes.data(), section.address, section.size};
  }
  visible_[image_index].Add(section.address, section.size, static_cast<uint64_t>(isid));
  return {};
}

int PtImageCache::ReadVisible(uint64_t ip, uint8_t* out, uint64_t size, int& isid,
                              size_t image_index) const {
  if (image_index >= visible_.size()) return -pte_nomap;
  const VisibleRanges::Range* visible = visible_[image_index].Find(ip);
  if (!visible) return -pte_nomap;
  isid = static_cast<int>(visible->id);
  if (size > visible->end - ip) size = visible->end - ip;
  return ReadSection(isid, ip, out, size);
}

int PtImageCache::ReadSection(int isid, uint64_t ip, uint8_t* out, uint64_t size) const {
  if (isid > 0 && static_cast<size_t>(isid) < bytes_.size()) {
    const Bytes& b = bytes_[static_cast<size_t>(isid)];
    if (b.data && ip >= b.address && ip < b.address + b.size) {
      const uint64_t n = std::min(size, b.address + b.size - ip);
      std::memcpy(out, b.data + (ip - b.address), n);
      return static_cast<int>(n);
    }
  }
  return pt_iscache_read(iscache_, out, size, isid, ip);
}

Status PtImageCache::AddAll(const ImageSet& images) {
  for (const ImageSection& section : images.sections()) {
    if (auto st = Add(section); !st) return st;
  }
  return {};
}

int PtImageCache::Read(int isid, uint64_t ip, uint8_t* out, uint64_t size) const {
  return ReadSection(isid, ip, out, size);
}

}  // namespace ptprof::pt
