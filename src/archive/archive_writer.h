#pragma once
// ArchiveWriter answers "how do these members and this manifest become one .ptar file, without
// ever leaving a half-written archive or clobbering one by accident?". Members are compressed as
// they are added (one zstd frame each); Finish writes the header frame, the manifest and the
// member frames to a temporary file in the output's directory and renames it into place. An
// existing output is replaced only when `force` was given.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/archive/ptar_format.h"
#include "src/model/result.h"

namespace ptprof::archive {

class ArchiveWriter {
 public:
  // Fails (naming the path) when `path` exists and `force` is false; checked again at the rename.
  static Result<ArchiveWriter> Create(std::string path, bool force);

  // Adds a member. Fails for a bad name or a name already added.
  Status Add(std::string name, std::span<const uint8_t> bytes);
  bool Has(std::string_view name) const;

  // Writes the archive with `manifest`, to which it adds "format", "format_version" and the
  // "members" table (name, size, packed_size, sha256 of every member, in the order added).
  Status Finish(nlohmann::ordered_json manifest);

  const std::string& path() const { return path_; }

 private:
  struct Packed {
    MemberInfo info;
    std::vector<uint8_t> frame;
  };

  ArchiveWriter(std::string path, bool force) : path_(std::move(path)), force_(force) {}

  std::string path_;
  bool force_ = false;
  std::vector<Packed> members_;
};

// One zstd frame holding `bytes`, with its content size and checksum in the frame header.
Result<std::vector<uint8_t>> CompressFrame(std::span<const uint8_t> bytes);

}  // namespace ptprof::archive
