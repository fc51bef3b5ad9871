#include "src/analyses/crossval/address_normaliser.h"

#include <algorithm>
#include <sstream>

namespace ptprof {

std::string BaseNameOf(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

void AddressNormaliser::AddMapping(int64_t pid, uint64_t start, uint64_t len,
                                   uint64_t file_offset, const std::string& file) {
  if (len == 0 || file.empty()) return;
  mappings_.push_back({pid, start, len, file_offset, BaseNameOf(file)});
}

void AddressNormaliser::AddSessionImages(const Session& session) {
  const auto& images = session.manifest.images;
  for (const ImageSection& section : session.images.sections()) {
    // The manifest image whose local file (and, for raw images, member range) holds the section.
    for (size_t i = 0; i < images.size() && i < session.image_sources.size(); ++i) {
      const archive::ImageEntry& image = images[i];
      if (image.path.empty() || image.path[0] == '[') continue;
      if (session.image_sources[i].file != section.file) continue;
      uint64_t file_offset = section.file_offset;
      if (image.kind == archive::ImageEntry::Kind::kRaw && session.extracted) {
        // An archive's raw image: the section's offset is in the member, not in the original.
        if (section.file_offset < image.member_offset ||
            section.file_offset - image.member_offset >= image.size)
          continue;
        file_offset = image.file_offset + (section.file_offset - image.member_offset);
      }
      AddMapping(-1, section.address, section.size, file_offset, image.path);
      break;
    }
  }
}

void AddressNormaliser::AddProcMaps(int64_t pid, const std::string& text) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string range, perms, offset, dev, inode, path;
    if (!(words >> range >> perms >> offset >> dev >> inode)) continue;
    std::getline(words >> std::ws, path);
    if (perms.size() < 3 || perms[2] != 'x' || path.empty() || path[0] == '[') continue;
    size_t dash = range.find('-');
    if (dash == std::string::npos) continue;
    uint64_t start = std::stoull(range.substr(0, dash), nullptr, 16);
    uint64_t end = std::stoull(range.substr(dash + 1), nullptr, 16);
    if (end > start) AddMapping(pid, start, end - start, std::stoull(offset, nullptr, 16), path);
  }
}

std::optional<NormalAddress> AddressNormaliser::Normalise(int64_t pid, uint64_t address) const {
  const Mapping* any = nullptr;
  for (auto it = mappings_.rbegin(); it != mappings_.rend(); ++it) {
    if (address < it->start || address - it->start >= it->len) continue;
    if (it->pid == pid || it->pid == -1) return NormalAddress{it->image, address - it->start + it->file_offset};
    if (!any) any = &*it;
  }
  if (any) return NormalAddress{any->image, address - any->start + any->file_offset};
  return std::nullopt;
}

std::vector<std::string> AddressNormaliser::Images() const {
  std::vector<std::string> out;
  for (const Mapping& m : mappings_)
    if (std::find(out.begin(), out.end(), m.image) == out.end()) out.push_back(m.image);
  return out;
}

}  // namespace ptprof
