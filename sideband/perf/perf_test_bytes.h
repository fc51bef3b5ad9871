#pragma once
// Test helper: builds perf.data bytes (records, file and pipe layouts) for the unit tests.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace ptprof::perf::testing {

class Bytes {
 public:
  template <class T>
  Bytes& Put(T v) {
    uint8_t b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    data.insert(data.end(), b, b + sizeof(T));
    return *this;
  }
  Bytes& U8(uint8_t v) { return Put(v); }
  Bytes& U16(uint16_t v) { return Put(v); }
  Bytes& U32(uint32_t v) { return Put(v); }
  Bytes& U64(uint64_t v) { return Put(v); }
  Bytes& Str(const std::string& s, size_t field) {  // NUL-padded to `field` bytes
    for (size_t i = 0; i < field; ++i) data.push_back(i < s.size() ? static_cast<uint8_t>(s[i]) : 0);
    return *this;
  }
  Bytes& Append(const std::vector<uint8_t>& more) {
    data.insert(data.end(), more.begin(), more.end());
    return *this;
  }
  std::vector<uint8_t> data;
};

// A record: header (type, misc, size = 8 + body) followed by the body.
inline std::vector<uint8_t> Record(uint32_t type, uint16_t misc, const std::vector<uint8_t>& body) {
  Bytes b;
  b.U32(type).U16(misc).U16(static_cast<uint16_t>(8 + body.size())).Append(body);
  return b.data;
}

// A 112-byte perf_event_attr (ABI version 5) with the given fields.
inline std::vector<uint8_t> Attr(uint32_t type, uint64_t config, uint64_t sample_type, bool sample_id_all,
                                 uint64_t branch_sample_type = 0) {
  Bytes b;
  b.U32(type).U32(112).U64(config).U64(1).U64(sample_type).U64(0).U64(sample_id_all ? (1u << 18) : 0);
  b.U32(0).U32(0).U64(0).U64(0).U64(branch_sample_type);
  while (b.data.size() < 112) b.U8(0);
  return b.data;
}

// A file-mode perf.data: one attr with `ids`, the records, and the given feature sections.
struct FileLayout {
  std::vector<uint8_t> attr;
  std::vector<uint64_t> ids;
  std::vector<uint8_t> records;
  std::vector<std::pair<int, std::vector<uint8_t>>> features;  // in increasing id order
};

inline std::vector<uint8_t> FileMode(const FileLayout& f) {
  const uint64_t header = 104;
  const uint64_t ids_offset = header;
  const uint64_t attrs_offset = ids_offset + f.ids.size() * 8;
  const uint64_t attr_size = f.attr.size() + 16;
  const uint64_t data_offset = attrs_offset + attr_size;
  Bytes b;
  b.U64(0x32454c4946524550ULL).U64(header).U64(attr_size);
  b.U64(attrs_offset).U64(attr_size).U64(data_offset).U64(f.records.size()).U64(0).U64(0);
  uint64_t bits[4] = {};
  for (const auto& [id, bytes] : f.features) bits[id / 64] |= uint64_t{1} << (id % 64);
  for (uint64_t w : bits) b.U64(w);
  for (uint64_t id : f.ids) b.U64(id);
  b.Append(f.attr).U64(ids_offset).U64(f.ids.size() * 8);
  b.Append(f.records);
  uint64_t section = data_offset + f.records.size() + 16 * f.features.size();
  for (const auto& [id, bytes] : f.features) {
    b.U64(section).U64(bytes.size());
    section += bytes.size();
  }
  for (const auto& [id, bytes] : f.features) b.Append(bytes);
  return b.data;
}

inline std::vector<uint8_t> PipeHeader() {
  Bytes b;
  b.U64(0x32454c4946524550ULL).U64(16);
  return b.data;
}

}  // namespace ptprof::perf::testing
