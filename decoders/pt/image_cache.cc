#include "decoders/pt/image_cache.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>

namespace ptprof::pt {

PtImageCache::PtImageCache(bool defer_libipt)
    : iscache_(pt_iscache_alloc(nullptr)), image_(pt_image_alloc(nullptr)),
      defer_(defer_libipt) {}

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

Result<int> PtImageCache::AddToLibipt(const ImageSection& section, size_t image_index) const {
  pt_image* target = image_index == 0             ? image_
                     : image_index <= more_.size() ? more_[image_index - 1]
                                                   : nullptr;
  if (!iscache_ || !target) return Fail("out of memory for the image");
  int isid = pt_iscache_add_file(iscache_, section.file.c_str(), section.file_offset,
                                 section.size, section.address);
  int status = isid < 0 ? isid : pt_image_add_cached(target, iscache_, isid, nullptr);
  if (status < 0) {
    char where[32];
    std::snprintf(where, sizeof where, "0x%" PRIx64, section.address);
    return Fail(section.file + ": cannot map at " + where + ": " + pt_errstr(pt_errcode(status)));
  }
  return isid;
}

Status PtImageCache::Realize() const {
  if (deferred_.empty() || !realized_) return realized_;
  std::vector<Deferred> deferred = std::move(deferred_);
  deferred_.clear();
  for (const Deferred& d : deferred) {
    auto isid = AddToLibipt(d.section, d.image_index);
    if (!isid) {
      realized_ = tl::unexpected(isid.error());
    } else if (*isid != d.isid) {
      realized_ = Fail(d.section.file + ": libipt gave section id " + std::to_string(*isid) +
                       " where " + std::to_string(d.isid) + " was given");
    }
    if (!realized_) break;
  }
  return realized_;
}

Status PtImageCache::Add(const ImageSection& section, size_t image_index) {
  if (image_index > more_.size()) return Fail("out of memory for the image");
  const bool has_bytes = section.size > 0 && section.bytes.size() == section.size;
  int isid = 0;
  if (defer_ && has_bytes) {
    // libipt would read these bytes from the file: it gives the next id, or the id of the same
    // section added before.
    std::string key = section.file;
    key.append(reinterpret_cast<const char*>(&section.file_offset), sizeof section.file_offset);
    key.append(reinterpret_cast<const char*>(&section.size), sizeof section.size);
    key.append(reinterpret_cast<const char*>(&section.address), sizeof section.address);
    isid = ids_.try_emplace(std::move(key), static_cast<int>(ids_.size()) + 1).first->second;
    deferred_.push_back(Deferred{
        ImageSection{section.file, section.file_offset, section.size, section.address, {}},
        image_index, isid});
  } else {
    defer_ = false;
    if (auto st = Realize(); !st) return st;
    auto added = AddToLibipt(section, image_index);
    if (!added) return tl::unexpected(added.error());
    isid = *added;
  }
  if (has_bytes) {
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
  if (!Realize()) return -pte_nomap;
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
