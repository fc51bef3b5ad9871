#pragma once
// PtImageCache answers "which code does libipt see?": it maps the sections of an ImageSet into a
// libipt image backed by an image section cache (pt_iscache), and reads instruction bytes back by
// section id the way the decoders identify them.
#include <cstdint>

#include <intel-pt.h>

#include "sideband/image_set.h"
#include "src/model/result.h"

namespace ptprof::pt {

class PtImageCache {
 public:
  PtImageCache();
  ~PtImageCache();
  PtImageCache(const PtImageCache&) = delete;
  PtImageCache& operator=(const PtImageCache&) = delete;

  // Adds one section (file range at an address); later sections hide what they overlap.
  Status Add(const ImageSection& section);
  Status AddAll(const ImageSet& images);

  pt_image* image() const { return image_; }
  // The section cache behind the images, for callers that build further images over it (so that
  // section ids, and Read, stay valid for their sections too).
  pt_image_section_cache* iscache() const { return iscache_; }

  // Reads up to `size` bytes of section `isid` at `ip`; libipt's error code (< 0) on failure.
  int Read(int isid, uint64_t ip, uint8_t* out, uint64_t size) const;

 private:
  pt_image_section_cache* iscache_ = nullptr;
  pt_image* image_ = nullptr;
};

}  // namespace ptprof::pt
