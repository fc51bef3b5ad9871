#include "src/analyses/crossval/branch_edges.h"

namespace ptprof {

uint32_t EdgeTable::ImageId(const std::string& image) {
  if (auto it = image_ids_.find(image); it != image_ids_.end()) return it->second;
  const auto id = static_cast<uint32_t>(images_.size());
  image_ids_.emplace(image, id);
  images_.push_back(image);
  return id;
}

uint32_t EdgeTable::EdgeId(Location from, Location to, bool create) {
  const Key key{from, to};
  if (!create) {
    const uint32_t* id = edge_ids_.Find(key);
    return id ? *id : kNoEdge;
  }
  auto [id, added] = edge_ids_.TryEmplace(key, static_cast<uint32_t>(edges_.size()));
  if (added) edges_.push_back(key);
  return *id;
}

}  // namespace ptprof
