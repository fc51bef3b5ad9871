#pragma once
// How an emulated recording stores the code QEMU executed: every region's bytes back to back in
// one member, images/qemu-code.bin, and one raw image entry per region pointing into it. Used by
// both QEMU backends (user mode and the kernel lab), whose regions are any type with `address`
// and `bytes`.
#include <cstdint>
#include <vector>

#include "src/archive/archive_writer.h"
#include "src/archive/manifest.h"
#include "src/model/result.h"

namespace ptprof::archive {

inline constexpr const char* kTranslatedCodeMember = "images/qemu-code.bin";

template <class Regions>
Status AddTranslatedCode(const Regions& regions, int32_t pid, ArchiveWriter& writer,
                         Manifest& manifest) {
  std::vector<uint8_t> code;
  for (const auto& region : regions) {
    ImageEntry image;
    image.kind = ImageEntry::Kind::kRaw;
    image.path = "[qemu translated code]";
    image.address = region.address;
    image.member_offset = code.size();
    image.size = region.bytes.size();
    image.pid = pid;
    image.member = kTranslatedCodeMember;
    manifest.images.push_back(image);
    code.insert(code.end(), region.bytes.begin(), region.bytes.end());
  }
  if (code.empty()) return {};
  return writer.Add(kTranslatedCodeMember, code);
}

}  // namespace ptprof::archive
