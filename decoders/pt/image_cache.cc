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
  if (section.size > 0) {
    // The new section hides what it overlaps: trim or drop the ranges under it.
    std::map<uint64_t, Visible>& ranges = visible_[image_index];
    const uint64_t begin = section.address, end = section.address + section.size;
    auto it = ranges.lower_bound(begin);
    if (it != ranges.begin()) {
      auto before = std::prev(it);
      if (before->second.end > begin) {
        const Visible tail{before->second.isid, before->second.end};
        before->second.end = begin;
        if (tail.end > end) ranges[end] = tail;
      }
    }
    it = ranges.lower_bound(begin);
    while (it != ranges.end() && it->first < end) {
      if (it->second.end > end) {
        const Visible rest = it->second;
        ranges.erase(it);
        ranges[end] = rest;
        break;
      }
      it = ranges.erase(it);
    }
    ranges[begin] = Visible{isid, end};
  }
  return {};
}

const PtImageCache::Visible* PtImageCache::Find(uint64_t ip, size_t image_index) const {
  if (image_index >= visible_.size()) return nullptr;
  const std::map<uint64_t, Visible>& visible = visible_[image_index];
  auto it = visible.upper_bound(ip);
  if (it == visible.begin()) return nullptr;
  --it;
  return ip < it->second.end ? &it->second : nullptr;
}

int PtImageCache::ReadVisible(uint64_t ip, uint8_t* out, uint64_t size, int& isid,
                              size_t image_index) const {
  const Visible* visible = Find(ip, image_index);
  if (!visible) return -pte_nomap;
  isid = visible->isid;
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
