#pragma once
// PtImageCache answers "which code does libipt see?": it maps the sections of an ImageSet into a
// libipt image backed by an image section cache (pt_iscache), and reads instruction bytes back by
// section id the way the decoders identify them.
//
// Adding a section to libipt costs a search of all sections added before (4,951 sections take
// about 200 ms), and the fast flow engine reads code from the sections' own bytes: a cache made
// with `defer_libipt` gives section ids itself, as libipt would give them, and adds the sections
// to libipt only when libipt's side is first asked for (Realize, image, iscache), if ever.
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include <intel-pt.h>

#include "sideband/image_set.h"
#include "sideband/visible_ranges.h"
#include "src/model/result.h"

namespace ptprof::pt {

class PtImageCache {
 public:
  explicit PtImageCache(bool defer_libipt = false);
  ~PtImageCache();
  PtImageCache(const PtImageCache&) = delete;
  PtImageCache& operator=(const PtImageCache&) = delete;

  // Adds one section (file range at an address) to the first image; later sections hide what
  // they overlap. The section's bytes, when it holds them, must outlive the cache: reads are
  // served from them, without libipt's section cache.
  Status Add(const ImageSection& section);
  Status AddAll(const ImageSet& images);

  // Another, empty image over the same section cache (the code of another address space); returns
  // its index for Add and image. Section ids, and so Read, are shared by all images.
  size_t AddImage();
  Status Add(const ImageSection& section, size_t image_index);

  // Adds the sections whose addition to libipt was deferred (in the order they were added);
  // fails as Add would have failed, naming the section's file.
  Status Realize() const;

  // libipt's side (with every section added: null when that failed, which Realize says).
  pt_image* image() const { return image(0); }
  // The section cache behind the images, for callers that build further images over it (so that
  // section ids, and Read, stay valid for their sections too).
  pt_image_section_cache* iscache() const { return Realize() ? iscache_ : nullptr; }
  pt_image* image(size_t index) const {
    if (!Realize()) return nullptr;
    return index == 0 ? image_ : more_[index - 1];
  }

  // Reads up to `size` bytes of section `isid` at `ip`; libipt's error code (< 0) on failure.
  int Read(int isid, uint64_t ip, uint8_t* out, uint64_t size) const;

  // Reads up to `size` bytes image `image_index` shows at `ip`, from one section only; returns
  // how many (libipt's error code when none) and the section in `isid`.
  int ReadVisible(uint64_t ip, uint8_t* out, uint64_t size, int& isid,
                  size_t image_index = 0) const;

 private:
  pt_image_section_cache* iscache_ = nullptr;
  pt_image* image_ = nullptr;
  std::vector<pt_image*> more_;  // images 1, 2, ...
  // Adds libipt has not seen yet, in order, with the section id each was given.
  struct Deferred {
    ImageSection section;  // without its bytes
    size_t image_index = 0;
    int isid = 0;
  };
  bool defer_ = false;  // until a section without bytes comes, or libipt's side is asked for
  mutable std::vector<Deferred> deferred_;
  mutable Status realized_;  // how the last Realize went (a failure stays)
  // The ids given so far, by file, offset, size and address (libipt gives a section it has
  // already the same id).
  std::unordered_map<std::string, int> ids_;
  // Adds `section` to libipt: its section id.
  Result<int> AddToLibipt(const ImageSection& section, size_t image_index) const;
  // What each image shows where (index 0: the first image); ids are section ids.
  std::vector<VisibleRanges> visible_ = std::vector<VisibleRanges>(1);
  // The bytes of each section by id, when the ImageSection held them (they are the file range
  // libipt's section cache would read).
  struct Bytes {
    const uint8_t* data = nullptr;
    uint64_t address = 0;
    uint64_t size = 0;
  };
  std::vector<Bytes> bytes_;  // index: section id
  int ReadSection(int isid, uint64_t ip, uint8_t* out, uint64_t size) const;
};

}  // namespace ptprof::pt
