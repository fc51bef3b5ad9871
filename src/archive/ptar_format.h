#pragma once
// PtarFormat answers "how are the bytes of a .ptar laid out?" for the archive reader and writer:
// the fixed header at the start of the first zstd frame, the limits a reader enforces, and which
// member names are acceptable. docs/formats/ptar.md describes the format byte by byte.
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "src/archive/sha256.h"
#include "src/model/result.h"

namespace ptprof::archive {

// "PTAR\r\n\x1a\n": the name, then bytes that text-mode transfers and `type` would mangle.
inline constexpr std::array<uint8_t, 8> kMagic = {'P', 'T', 'A', 'R', '\r', '\n', 0x1a, '\n'};
inline constexpr uint32_t kFormatVersion = 1;
inline constexpr uint32_t kHeaderSize = 56;  // magic, version, header size, manifest size, digest
inline constexpr uint64_t kMaxManifestSize = 64ull << 20;
inline constexpr size_t kMaxMemberNameSize = 255;
inline constexpr int kCompressionLevel = 3;

// The fixed header: the manifest (JSON, UTF-8) follows it directly in the first frame.
struct PtarHeader {
  uint32_t format_version = kFormatVersion;
  uint32_t header_size = kHeaderSize;  // later versions may append fields; readers skip them
  uint64_t manifest_size = 0;
  Sha256::Digest manifest_sha256{};
};

std::vector<uint8_t> EncodeHeader(const PtarHeader& header);
// Parses the header at the start of `bytes` (the first frame's content). Errors are "offset N:
// ..." relative to the start of that content; the caller adds the file name.
Result<PtarHeader> DecodeHeader(std::span<const uint8_t> bytes);

// One member as the manifest's "members" table lists it, and where its frame is in the file.
struct MemberInfo {
  std::string name;
  uint64_t size = 0;         // bytes after decompression
  uint64_t packed_size = 0;  // bytes of its zstd frame in the file
  Sha256::Digest sha256{};   // of the decompressed bytes
  uint64_t offset = 0;       // file offset of its frame (computed by the reader, not stored)
};

// Member names are relative paths of letters, digits and "._+-/" without empty, "." or ".."
// components, at most 255 bytes: they may become file names when an archive is extracted.
Status CheckMemberName(std::string_view name);

// Parses a 64-digit lower-case hex SHA-256.
bool ParseDigest(std::string_view hex, Sha256::Digest& digest);

}  // namespace ptprof::archive
