#include "sideband/perf/perf_data_tokenizer.h"

#include <fmt/format.h>

#include "sideband/perf/byte_cursor.h"
#include "sideband/perf/perf_abi.h"

namespace ptprof::perf {

namespace {

constexpr uint64_t kFileHeaderSize = 104;  // magic, size, attr_size, 3 sections, 256 feature bits
constexpr uint64_t kPipeHeaderSize = 16;   // magic, size

struct Section {
  uint64_t offset = 0, size = 0;
};

bool ReadSection(ByteCursor& c, Section& s) { return c.Read(s.offset) && c.Read(s.size); }

}  // namespace

const char* TokenizerStateName(PerfDataTokenizer::State state) {
  switch (state) {
    case PerfDataTokenizer::State::kFileHeader: return "file header";
    case PerfDataTokenizer::State::kAttrs: return "attrs";
    case PerfDataTokenizer::State::kDataRecords: return "data records";
    case PerfDataTokenizer::State::kFeatureSections: return "feature sections";
    case PerfDataTokenizer::State::kDone: return "done";
  }
  return "?";
}

PerfDataTokenizer::PerfDataTokenizer(std::span<const uint8_t> bytes, std::string name)
    : bytes_(bytes), name_(std::move(name)) {}

tl::unexpected<ptprof::Error> PerfDataTokenizer::Stop(uint64_t offset, const std::string& what) {
  state_ = State::kDone;
  return Fail(fmt::format("{}: offset {:#x}: {}", name_, offset, what));
}

Result<std::optional<PerfToken>> PerfDataTokenizer::Next() {
  switch (state_) {
    case State::kFileHeader: return ReadFileHeader();
    case State::kAttrs: return ReadAttr();
    case State::kDataRecords: return ReadRecord();
    case State::kFeatureSections: return ReadFeature();
    case State::kDone: return std::nullopt;
  }
  return std::nullopt;
}

Result<std::optional<PerfToken>> PerfDataTokenizer::ReadFileHeader() {
  ByteCursor c(bytes_);
  uint64_t magic = 0, size = 0;
  if (!c.Read(magic) || !c.Read(size)) return Stop(0, "too short for a perf.data header (" + std::to_string(bytes_.size()) + " bytes)");
  if (magic == kMagicPerfFile2Swapped) return Stop(0, "big-endian perf.data is not supported");
  if (magic == kMagicPerfFile1) return Stop(0, "perf.data version 1 (\"PERFFILE\") is not supported");
  if (magic != kMagicPerfFile2) return Stop(0, "not a perf.data file (no PERFILE2 magic)");
  if (size == kPipeHeaderSize) {  // pipe mode: records follow at once
    pipe_ = true;
    pos_ = kPipeHeaderSize;
    data_begin_ = pos_;
    data_end_ = bytes_.size();
    state_ = State::kDataRecords;
    return ReadRecord();
  }
  if (size < kFileHeaderSize) return Stop(8, fmt::format("header size {} is neither a pipe header (16) nor a file header (>= {})", size, kFileHeaderSize));
  Section attrs, data, event_types;
  if (!c.Read(attr_size_) || !ReadSection(c, attrs) || !ReadSection(c, data) || !ReadSection(c, event_types) ||
      !c.Read(features_[0]) || !c.Read(features_[1]) || !c.Read(features_[2]) || !c.Read(features_[3]))
    return Stop(0, fmt::format("file header is cut: the file has {} bytes, the header needs {}", bytes_.size(), kFileHeaderSize));
  const uint64_t file_size = bytes_.size();
  if (attrs.size != 0 && attr_size_ < 64 + 16)
    return Stop(16, fmt::format("attr_size {} is smaller than the oldest perf_event_attr plus its id section (80)", attr_size_));
  if (attrs.offset > file_size || attrs.size > file_size - attrs.offset)
    return Stop(24, fmt::format("attr section [{:#x}, +{:#x}) lies outside the {}-byte file", attrs.offset, attrs.size, file_size));
  if (data.offset > file_size)
    return Stop(40, fmt::format("data section starts at {:#x}, past the end of the {}-byte file", data.offset, file_size));
  attrs_pos_ = attrs.offset;
  attrs_end_ = attrs.offset + (attr_size_ ? attrs.size / attr_size_ * attr_size_ : 0);
  data_begin_ = data.offset;
  if (data.size == 0 && data.offset != 0 && file_size - data.offset >= 8) {
    data.size = file_size - data.offset;  // never finalised: no feature sections either
    data_size_zero_ = true;
    features_[0] = features_[1] = features_[2] = features_[3] = 0;
  }
  data_cut_ = data.size > file_size - data.offset;
  data_end_ = data_cut_ ? file_size : data.offset + data.size;
  feature_table_pos_ = data.offset + data.size;  // meaningless when data_cut_
  pos_ = data_begin_;
  state_ = State::kAttrs;
  return ReadAttr();
}

Result<std::optional<PerfToken>> PerfDataTokenizer::ReadAttr() {
  if (attrs_pos_ >= attrs_end_) {
    state_ = State::kDataRecords;
    return ReadRecord();
  }
  const uint64_t at = attrs_pos_;
  attrs_pos_ += attr_size_;
  auto attr = ParseEventAttr(bytes_.subspan(at, attr_size_ - 16), at);
  if (!attr) return Stop(at, attr.error().message);
  ByteCursor c(bytes_.subspan(at + attr_size_ - 16, 16), at + attr_size_ - 16);
  Section ids;
  ReadSection(c, ids);
  if (ids.offset > bytes_.size() || ids.size > bytes_.size() - ids.offset)
    return Stop(at + attr_size_ - 16, fmt::format("id section [{:#x}, +{:#x}) of the attr lies outside the file", ids.offset, ids.size));
  AttrToken token;
  token.offset = at;
  token.attr.attr = *attr;
  ByteCursor id_cursor(bytes_.subspan(ids.offset, ids.size), ids.offset);
  token.attr.ids.resize(ids.size / 8);
  for (auto& id : token.attr.ids) id_cursor.Read(id);
  return PerfToken(std::move(token));
}

Result<std::optional<PerfToken>> PerfDataTokenizer::ReadRecord() {
  if (pos_ >= data_end_) {
    if (data_cut_)
      return Stop(pos_, fmt::format("the file is cut: its header promises a data section up to {:#x} but the file ends here",
                                     feature_table_pos_));
    if (pipe_) {
      state_ = State::kDone;
      return std::nullopt;
    }
    state_ = State::kFeatureSections;
    return ReadFeature();
  }
  const uint64_t at = pos_;
  const uint64_t left = data_end_ - at;
  const char* where = data_cut_ || pipe_ ? "the file" : "the data section";
  ByteCursor c(bytes_.subspan(at, left), at);
  RecordToken t;
  t.offset = at;
  if (!(c.Read(t.header.type) && c.Read(t.header.misc) && c.Read(t.header.size)))
    return Stop(at, fmt::format("record header cut by the end of {} ({} bytes left)", where, left));
  if (t.header.size < 8) return Stop(at, fmt::format("record size {} is smaller than a record header", t.header.size));
  if (!c.Bytes(t.header.size - 8u, t.body))
    return Stop(at, fmt::format("{} record of {} bytes runs past the end of {} ({} bytes left)",
                                 RecordTypeName(t.header.type), t.header.size, where, left));
  uint64_t payload = 0;
  if (t.header.type == kRecordAuxtrace) {
    ByteCursor b(t.body, at + 8);
    if (!b.Read(payload)) return Stop(at, "AUXTRACE record too short for its size field");
  } else if (t.header.type == kRecordHeaderTracingData) {
    ByteCursor b(t.body, at + 8);
    uint32_t size = 0;
    if (!b.Read(size)) return Stop(at, "HEADER_TRACING_DATA record too short for its size field");
    payload = (uint64_t{size} + 7) & ~uint64_t{7};
  }
  if (payload != 0 && !c.Bytes(payload, t.payload))
    return Stop(at, fmt::format("{} buffer of {} bytes runs past the end of {} ({} bytes left after the record)",
                                 RecordTypeName(t.header.type), payload, where, c.remaining()));
  pos_ = c.offset();
  return PerfToken(t);
}

Result<std::optional<PerfToken>> PerfDataTokenizer::ReadFeature() {
  while (next_feature_bit_ < kFeatureBits) {
    const int bit = next_feature_bit_++;
    if (bit == 0 || !(features_[bit / 64] & (uint64_t{1} << (bit % 64)))) continue;
    const uint64_t at = feature_table_pos_;
    feature_table_pos_ += 16;
    if (at > bytes_.size() || bytes_.size() - at < 16)
      return Stop(at, fmt::format("feature table entry for {} lies past the end of the {}-byte file", FeatureName(bit),
                                   bytes_.size()));
    ByteCursor c(bytes_.subspan(at, 16), at);
    Section s;
    ReadSection(c, s);
    if (s.offset > bytes_.size() || s.size > bytes_.size() - s.offset)
      return Stop(at, fmt::format("feature section {} [{:#x}, +{:#x}) lies outside the {}-byte file", FeatureName(bit),
                                   s.offset, s.size, bytes_.size()));
    return PerfToken(FeatureToken{bit, s.offset, bytes_.subspan(s.offset, s.size)});
  }
  state_ = State::kDone;
  return std::nullopt;
}

Result<PerfAttr> ParseHeaderAttrRecord(std::span<const uint8_t> body, uint64_t offset) {
  ByteCursor c(body, offset + 8);
  uint32_t type = 0, size = 0;
  if (!c.Read(type) || !c.Read(size))
    return Fail(fmt::format("offset {:#x}: HEADER_ATTR record too short for a perf_event_attr", offset));
  if (size < 64 || size > body.size())
    return Fail(fmt::format("offset {:#x}: HEADER_ATTR attr.size {} does not fit the {}-byte record", offset, size,
                            body.size() + 8));
  auto attr = ParseEventAttr(body.first(size), offset + 8);
  if (!attr) return tl::unexpected(attr.error());
  PerfAttr a;
  a.attr = *attr;
  ByteCursor ids(body.subspan(size), offset + 8 + size);
  a.ids.resize(ids.remaining() / 8);
  for (auto& id : a.ids) ids.Read(id);
  return a;
}

Result<FeatureToken> ParseHeaderFeatureRecord(std::span<const uint8_t> body, uint64_t offset) {
  ByteCursor c(body, offset + 8);
  uint64_t id = 0;
  if (!c.Read(id)) return Fail(fmt::format("offset {:#x}: HEADER_FEATURE record too short for its feature id", offset));
  if (id >= kFeatureBits) return Fail(fmt::format("offset {:#x}: HEADER_FEATURE id {} is out of range", offset, id));
  return FeatureToken{static_cast<int>(id), offset + 16, body.subspan(8)};
}

}  // namespace ptprof::perf
