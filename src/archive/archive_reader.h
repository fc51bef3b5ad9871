#pragma once
// ArchiveReader answers "what does this .ptar hold, and are its bytes the ones that were
// written?". Opening checks the layout: the header frame, the manifest's digest and JSON, and that
// every member's zstd frame lies where the members table says, with the size it says. Reading a
// member decompresses its frame (never producing more than the recorded size, whatever the frame
// headers claim) and checks its SHA-256. Every error is one line naming the archive, the file
// offset and the member.
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "sideband/shared_bytes.h"
#include "src/archive/ptar_format.h"
#include "src/model/result.h"

namespace ptprof::archive {

class ArchiveReader {
 public:
  static Result<ArchiveReader> Open(const std::string& path);
  // The same over bytes already in memory; `label` names them in errors.
  static Result<ArchiveReader> FromBytes(std::string label, std::vector<uint8_t> bytes);
  static Result<ArchiveReader> FromBytes(std::string label, SharedBytes bytes);

  const std::string& label() const { return label_; }
  uint64_t file_size() const { return bytes_.size(); }
  const PtarHeader& header() const { return header_; }
  // The whole manifest, "members" table included.
  const nlohmann::ordered_json& manifest() const { return manifest_; }
  const std::vector<MemberInfo>& members() const { return members_; }
  const MemberInfo* Find(std::string_view name) const;

  // The member's bytes, checked against its size and SHA-256.
  Result<std::vector<uint8_t>> Read(std::string_view name) const;
  Result<std::vector<uint8_t>> Read(const MemberInfo& member) const;
  // The same in memory shared read-only, mapped in huge pages where the kernel gives them (one
  // page fault per 2 MiB: SharedBytes::Filled), for a trace stream held while it is decoded.
  Result<SharedBytes> ReadShared(const MemberInfo& member) const;
  // The member's bytes written to the file `path` (created or truncated) a chunk at a time, with
  // the same checks as Read: for members too large to hold in memory.
  Status ReadToFile(const MemberInfo& member, const std::string& path) const;
  // Reads every member (the first damaged one is the error).
  Status VerifyAll() const;

 private:
  ArchiveReader() = default;
  Status ParseLayout();
  Status ParseMembersTable(uint64_t first_member_offset);
  // Decompresses the member a chunk at a time into `consume`, then checks its size and SHA-256:
  // what Read and ReadToFile share. An error `consume` returns comes back as it is.
  Status ReadMember(const MemberInfo& member,
                    const std::function<Status(std::span<const uint8_t>)>& consume) const;
  std::string Where(uint64_t offset, std::string_view member) const;

  std::string label_;
  SharedBytes bytes_;  // the archive file, mapped
  PtarHeader header_;
  nlohmann::ordered_json manifest_;
  std::vector<MemberInfo> members_;
};

// Decompresses the zstd frame `frame` (exactly one frame) into at most `limit` bytes. The error
// says what went wrong without naming anything (the caller knows what the frame is).
Result<std::vector<uint8_t>> DecompressFrame(std::span<const uint8_t> frame, uint64_t limit);
// The pieces DecompressFrameTo hands out, at most (unless told otherwise).
inline constexpr size_t kPieceBytes = size_t{1} << 17;
// The two buffers DecompressFrameTo hands its pieces out of, in turn.
struct PieceBuffers {
  std::vector<uint8_t> turn[2];
};
// The same, handing the bytes to `consume` a piece of at most `chunk` bytes at a time; an error
// `consume` returns is returned as it is. A piece stays unchanged until the consume call after
// it returns (the pieces alternate between two buffers), so that another thread may read it
// meanwhile (SideDigest); the last one for as long as `buffers` lives, when the caller gives
// them (else they go when the call returns).
Status DecompressFrameTo(std::span<const uint8_t> frame, uint64_t limit,
                         const std::function<Status(std::span<const uint8_t>)>& consume,
                         size_t chunk = kPieceBytes, PieceBuffers* buffers = nullptr);

}  // namespace ptprof::archive
