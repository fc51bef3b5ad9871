#include "src/analyses/crossval/branch_edges.h"

namespace ptprof {

uint32_t EdgeTable::ImageId(const std::string& image) {
  auto [it, added] = image_ids_.emplace(image, static_cast<uint32_t>(images_.size()));
  if (added) images_.push_back(image);
  return it->second;
}

uint32_t EdgeTable::EdgeId(Location from, Location to, bool create) {
  auto key = std::make_pair(from, to);
  if (auto it = edge_ids_.find(key); it != edge_ids_.end()) return it->second;
  if (!create) return kNoEdge;
  const auto id = static_cast<uint32_t>(edges_.size());
  edges_.push_back(key);
  edge_ids_.emplace(key, id);
  return id;
}

}  // namespace ptprof
