#pragma once
// EdgeTable answers "which number does this normalised edge {(image, offset) -> (image, offset)}
// have?", for both inputs of `ptprof validate` alike: B's bursts are numbered first, then the
// decoded flow's branches (FlowEdges), so that BurstMatcher finds the bursts in the flow by number.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "src/analyses/crossval/address_normaliser.h"
#include "src/analyses/crossval/flat_id_map.h"

namespace ptprof {

inline constexpr uint32_t kNoEdge = UINT32_MAX;

// A normalised location, numbered: image number and offset.
struct Location {
  uint32_t image = 0;
  uint64_t offset = 0;
  bool operator==(const Location&) const = default;
};

class EdgeTable {
 public:
  uint32_t ImageId(const std::string& image);
  const std::string& ImageName(uint32_t id) const { return images_[id]; }
  size_t images() const { return images_.size(); }
  Location Locate(const NormalAddress& a) { return {ImageId(a.image), a.offset}; }
  // The number of edge {from, to}, made when `create`, else kNoEdge when it is new.
  uint32_t EdgeId(Location from, Location to, bool create);
  std::pair<Location, Location> Edge(uint32_t id) const { return edges_[id]; }
  size_t size() const { return edges_.size(); }

 private:
  using Key = std::pair<Location, Location>;
  struct Hash {
    size_t operator()(const Key& e) const {
      uint64_t h = e.first.offset * 0x9e3779b97f4a7c15ULL ^ (e.first.image + 0x632be59bd9b4e019ULL);
      h = (h ^ e.second.offset) * 0xbf58476d1ce4e5b9ULL ^ e.second.image;
      return static_cast<size_t>(h ^ (h >> 31));
    }
  };
  std::vector<std::string> images_;
  std::unordered_map<std::string, uint32_t> image_ids_;
  std::vector<Key> edges_;
  FlatIdMap<Key, Hash> edge_ids_;
};

}  // namespace ptprof
