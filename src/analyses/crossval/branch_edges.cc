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

FlowEdgeIndex::FlowEdgeIndex(const EdgeSequence& sequence, size_t edge_count)
    : sequence_(sequence), positions_(edge_count) {
  for (size_t i = 0; i < sequence_.size(); ++i)
    if (sequence_[i] != kNoEdge && sequence_[i] < edge_count)
      positions_[sequence_[i]].push_back(static_cast<uint32_t>(i));
}

bool FlowEdgeIndex::Contains(const std::vector<uint32_t>& run) const {
  if (run.empty()) return true;
  size_t rarest = 0;
  for (size_t j = 0; j < run.size(); ++j) {
    if (run[j] == kNoEdge || run[j] >= positions_.size()) return false;
    if (positions_[run[j]].size() < positions_[run[rarest]].size()) rarest = j;
  }
  for (uint32_t p : positions_[run[rarest]]) {
    if (p < rarest) continue;
    const size_t start = p - rarest;
    if (start + run.size() > sequence_.size()) continue;
    bool same = true;
    for (size_t j = 0; j < run.size() && same; ++j) same = sequence_[start + j] == run[j];
    if (same) return true;
  }
  return false;
}

}  // namespace ptprof
