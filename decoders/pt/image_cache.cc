#include "decoders/pt/image_cache.h"

#include <cinttypes>
#include <cstdio>

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
  return {};
}

Status PtImageCache::AddAll(const ImageSet& images) {
  for (const ImageSection& section : images.sections()) {
    if (auto st = Add(section); !st) return st;
  }
  return {};
}

int PtImageCache::Read(int isid, uint64_t ip, uint8_t* out, uint64_t size) const {
  return pt_iscache_read(iscache_, out, size, isid, ip);
}

}  // namespace ptprof::pt
