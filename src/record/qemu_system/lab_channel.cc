#include "src/record/qemu_system/lab_channel.h"

#include <zlib.h>

#include <fmt/format.h>

namespace ptprof::record {

std::optional<std::string> LabChannel::Value(const std::string& key) const {
  auto it = values.find(key);
  if (it == values.end()) return std::nullopt;
  return it->second;
}

Result<std::vector<uint8_t>> Gunzip(const std::vector<uint8_t>& bytes, const std::string& name) {
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) return Fail(name + ": cannot start gunzip");
  std::vector<uint8_t> out;
  z.next_in = const_cast<Bytef*>(bytes.data());
  z.avail_in = static_cast<uInt>(bytes.size());
  uint8_t chunk[1 << 16];
  int status = Z_OK;
  while (status == Z_OK) {
    z.next_out = chunk;
    z.avail_out = sizeof chunk;
    status = inflate(&z, Z_NO_FLUSH);
    out.insert(out.end(), chunk, chunk + (sizeof chunk - z.avail_out));
    if (status == Z_BUF_ERROR && z.avail_in == 0) break;
  }
  const uint64_t at = z.total_in;
  inflateEnd(&z);
  if (status != Z_STREAM_END)
    return Fail(fmt::format("{}: offset {:#x}: gzip data {}", name, at,
                            status == Z_BUF_ERROR ? "ends early" : "is corrupt"));
  return out;
}

Result<LabChannel> ParseLabChannel(const std::vector<uint8_t>& bytes, const std::string& name) {
  LabChannel channel;
  size_t at = 0;
  while (at < bytes.size()) {
    size_t end = at;
    while (end < bytes.size() && bytes[end] != '\n') ++end;
    std::string line(bytes.begin() + static_cast<std::ptrdiff_t>(at),
                     bytes.begin() + static_cast<std::ptrdiff_t>(end));
    const size_t line_at = at;
    at = end < bytes.size() ? end + 1 : end;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (line.empty()) continue;
    const size_t space = line.find(' ');
    const std::string key = line.substr(0, space);
    const std::string value = space == std::string::npos ? "" : line.substr(space + 1);
    if (key != "file") {
      channel.values[key] = value;
      continue;
    }
    // "file NAME SIZE" and SIZE raw bytes.
    const size_t split = value.rfind(' ');
    if (split == std::string::npos)
      return Fail(fmt::format("{}: offset {:#x}: expected 'file NAME SIZE'", name, line_at));
    std::string file = value.substr(0, split);
    const uint64_t size = std::strtoull(value.c_str() + split + 1, nullptr, 10);
    const uint64_t available = bytes.size() - at;
    std::vector<uint8_t> content(bytes.begin() + static_cast<std::ptrdiff_t>(at),
                                 bytes.begin() + static_cast<std::ptrdiff_t>(at + std::min(size, available)));
    at += std::min(size, available);
    if (size > available) channel.truncated = true;
    if (file.size() > 3 && file.compare(file.size() - 3, 3, ".gz") == 0) {
      file.resize(file.size() - 3);
      if (content.empty()) {
        channel.files[file] = {};
        continue;
      }
      auto plain = Gunzip(content, fmt::format("{}: file '{}.gz'", name, file));
      if (!plain) return tl::unexpected(plain.error());
      content = std::move(*plain);
    }
    channel.files[file] = std::move(content);
  }
  return channel;
}

}  // namespace ptprof::record
