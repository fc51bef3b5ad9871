#pragma once
// PerfDataTokenizer answers "what are the pieces of this perf.data, in order, and where are they?"
// It frames a perf.data held in memory (file mode or pipe mode) into tokens: the attrs of the
// attr section, every record of the data section (with the payload that follows AUXTRACE and
// HEADER_TRACING_DATA records), and the feature sections. It is a state machine with named
// states; each call to Next() advances by one token. It checks every size against the bytes that
// exist before using it and stops with an error naming the file and offset when the framing is
// broken (cut file, absurd record size, payload past the end). What a record means is the
// caller's business (DecodeRecord, ParseFeatureSection).
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <variant>

#include "sideband/perf/perf_attr.h"
#include "sideband/perf/perf_record.h"
#include "src/model/result.h"

namespace ptprof::perf {

struct AttrToken {  // one entry of the file-mode attr section
  PerfAttr attr;
  uint64_t offset = 0;
};

struct RecordToken {  // one record of the data section (or of a pipe)
  RecordHeader header;
  uint64_t offset = 0;
  std::span<const uint8_t> body;     // header.size - 8 bytes after the header
  std::span<const uint8_t> payload;  // AUXTRACE data / tracing data that follows the record
};

struct FeatureToken {  // one file-mode feature section
  int id = 0;
  uint64_t offset = 0;
  std::span<const uint8_t> bytes;
};

using PerfToken = std::variant<AttrToken, RecordToken, FeatureToken>;

class PerfDataTokenizer {
 public:
  enum class State {
    kFileHeader,      // nothing read yet
    kAttrs,           // file mode: walking the attr section
    kDataRecords,     // walking records (file: the data section; pipe: the whole stream)
    kFeatureSections, // file mode: walking the feature sections after the data
    kDone,            // end reached, or an error was returned
  };

  // `name` names the input in errors. The bytes must outlive the tokenizer and its tokens.
  PerfDataTokenizer(std::span<const uint8_t> bytes, std::string name);

  // The next token; std::nullopt at the end; an error (after which the state is kDone).
  Result<std::optional<PerfToken>> Next();

  State state() const { return state_; }
  bool pipe_mode() const { return pipe_; }
  uint64_t data_offset() const { return data_begin_; }
  uint64_t data_size() const { return data_end_ - data_begin_; }
  // The header said the data section is empty but records follow (perf was killed before it
  // wrote the final header); the records are read to the end of the file.
  bool data_size_was_zero() const { return data_size_zero_; }

 private:
  Result<std::optional<PerfToken>> ReadFileHeader();
  Result<std::optional<PerfToken>> ReadAttr();
  Result<std::optional<PerfToken>> ReadRecord();
  Result<std::optional<PerfToken>> ReadFeature();
  tl::unexpected<ptprof::Error> Stop(uint64_t offset, const std::string& what);

  std::span<const uint8_t> bytes_;
  std::string name_;
  State state_ = State::kFileHeader;
  bool pipe_ = false;
  // file mode
  uint64_t attr_size_ = 0, attrs_pos_ = 0, attrs_end_ = 0;
  uint64_t data_begin_ = 0, data_end_ = 0;
  bool data_cut_ = false;
  bool data_size_zero_ = false;  // the header's data section reaches past the end of the file
  uint64_t features_[4] = {};
  int next_feature_bit_ = 0;
  uint64_t feature_table_pos_ = 0;
  // both
  uint64_t pos_ = 0;
};

// Decodes the body of a pipe-mode PERF_RECORD_HEADER_ATTR (a perf_event_attr and its ids).
Result<PerfAttr> ParseHeaderAttrRecord(std::span<const uint8_t> body, uint64_t offset);

// Splits the body of a pipe-mode PERF_RECORD_HEADER_FEATURE into its feature id and section bytes.
Result<FeatureToken> ParseHeaderFeatureRecord(std::span<const uint8_t> body, uint64_t offset);

const char* TokenizerStateName(PerfDataTokenizer::State state);

}  // namespace ptprof::perf
