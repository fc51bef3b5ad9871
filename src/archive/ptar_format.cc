#include "src/archive/ptar_format.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

namespace ptprof::archive {

namespace {

void PutLe(std::vector<uint8_t>& out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<uint8_t>(value >> (8 * i)));
}

uint64_t GetLe(const uint8_t* in, int bytes) {
  uint64_t value = 0;
  for (int i = bytes - 1; i >= 0; --i) value = value << 8 | in[i];
  return value;
}

}  // namespace

std::vector<uint8_t> EncodeHeader(const PtarHeader& header) {
  std::vector<uint8_t> out(kMagic.begin(), kMagic.end());
  PutLe(out, header.format_version, 4);
  PutLe(out, kHeaderSize, 4);
  PutLe(out, header.manifest_size, 8);
  out.insert(out.end(), header.manifest_sha256.begin(), header.manifest_sha256.end());
  return out;
}

Result<PtarHeader> DecodeHeader(std::span<const uint8_t> bytes) {
  if (bytes.size() < kMagic.size() || !std::equal(kMagic.begin(), kMagic.end(), bytes.begin()))
    return Fail("offset 0x0: a zstd file, but not a ptprof archive (no PTAR header)");
  if (bytes.size() < kHeaderSize)
    return Fail(fmt::format("offset {:#x}: the archive header is cut short", bytes.size()));
  PtarHeader header;
  header.format_version = static_cast<uint32_t>(GetLe(bytes.data() + 8, 4));
  header.header_size = static_cast<uint32_t>(GetLe(bytes.data() + 12, 4));
  header.manifest_size = GetLe(bytes.data() + 16, 8);
  std::memcpy(header.manifest_sha256.data(), bytes.data() + 24, 32);
  if (header.format_version != kFormatVersion)
    return Fail(fmt::format("offset 0x8: format version {} (this ptprof reads version {})",
                            header.format_version, kFormatVersion));
  if (header.header_size < kHeaderSize || header.header_size > 4096)
    return Fail(fmt::format("offset 0xc: header size {} is not in [{}, 4096]", header.header_size,
                            kHeaderSize));
  if (header.manifest_size == 0 || header.manifest_size > kMaxManifestSize)
    return Fail(fmt::format("offset 0x10: manifest size {} is not in [1, {}]", header.manifest_size,
                            kMaxManifestSize));
  return header;
}

Status CheckMemberName(std::string_view name) {
  if (name.empty() || name.size() > kMaxMemberNameSize)
    return Fail(fmt::format("member name of {} bytes (1 to {} allowed)", name.size(),
                            kMaxMemberNameSize));
  size_t start = 0;
  while (start <= name.size()) {
    const size_t end = std::min(name.find('/', start), name.size());
    const std::string_view part = name.substr(start, end - start);
    if (part.empty() || part == "." || part == "..")
      return Fail(fmt::format("member name '{}': empty, '.' or '..' path component", name));
    for (char c : part) {
      const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '_' || c == '+' || c == '-';
      if (!ok)
        return Fail(fmt::format("member name '{}': character {:#04x} not allowed", name,
                                static_cast<unsigned>(static_cast<unsigned char>(c))));
    }
    start = end + 1;
  }
  return {};
}

bool ParseDigest(std::string_view hex, Sha256::Digest& digest) {
  if (hex.size() != 64) return false;
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  for (size_t i = 0; i < 32; ++i) {
    const int hi = nibble(hex[2 * i]), lo = nibble(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    digest[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return true;
}

}  // namespace ptprof::archive
