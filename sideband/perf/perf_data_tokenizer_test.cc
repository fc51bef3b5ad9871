#include "sideband/perf/perf_data_tokenizer.h"

#include <catch2/catch.hpp>

#include "sideband/perf/perf_abi.h"
#include "sideband/perf/perf_test_bytes.h"

using namespace ptprof;
using namespace ptprof::perf;
using namespace ptprof::perf::testing;
using State = PerfDataTokenizer::State;

namespace {

std::vector<uint8_t> SomeRecords() {
  Bytes b;
  Bytes itrace;
  itrace.U32(1).U32(2);
  b.Append(Record(kRecordItraceStart, 0, itrace.data));
  Bytes aux;
  aux.U64(16).U64(0).U64(0).U32(0).U32(0xffffffff).U32(0).U32(0);
  b.Append(Record(kRecordAuxtrace, 0, aux.data));
  for (int i = 0; i < 16; ++i) b.U8(static_cast<uint8_t>(0xa0 + i));  // the AUX payload
  b.Append(Record(kRecordFinishedRound, 0, {}));
  return b.data;
}

// Runs the tokenizer to the end; returns the states it was in before each token and the error.
std::vector<State> Walk(PerfDataTokenizer& t, std::vector<PerfToken>& tokens, std::string& error) {
  std::vector<State> states;
  for (;;) {
    auto token = t.Next();
    if (!token) {
      error = token.error().message;
      break;
    }
    if (!*token) break;
    states.push_back(t.state());
    tokens.push_back(**token);
  }
  return states;
}

}  // namespace

TEST_CASE("file mode: attrs, then records with payloads, then feature sections") {
  Bytes host;
  host.U32(8).Str("box", 8);
  auto file = FileMode({Attr(1, 9, kSampleTime, true), {5, 6}, SomeRecords(), {{kFeatHostname, host.data}}});
  PerfDataTokenizer t(file, "f.data");
  std::vector<PerfToken> tokens;
  std::string error;
  auto states = Walk(t, tokens, error);
  CHECK(error.empty());
  REQUIRE(tokens.size() == 5);
  CHECK(states == std::vector<State>{State::kAttrs, State::kDataRecords, State::kDataRecords, State::kDataRecords,
                                     State::kFeatureSections});
  CHECK(std::get<AttrToken>(tokens[0]).attr.ids == std::vector<uint64_t>{5, 6});
  const auto& aux = std::get<RecordToken>(tokens[2]);
  CHECK(aux.header.type == kRecordAuxtrace);
  REQUIRE(aux.payload.size() == 16);
  CHECK(aux.payload[0] == 0xa0);
  CHECK(std::get<FeatureToken>(tokens[4]).id == kFeatHostname);
  CHECK_FALSE(t.pipe_mode());
  CHECK(t.state() == State::kDone);
}

TEST_CASE("pipe mode: records right after the 16-byte header") {
  Bytes pipe;
  pipe.Append(PipeHeader());
  Bytes attr_body;
  attr_body.Append(Attr(1, 9, kSampleTime, true)).U64(5);
  pipe.Append(Record(kRecordHeaderAttr, 0, attr_body.data));
  Bytes feature;
  feature.U64(kFeatHostname).U32(8).Str("box", 8);
  pipe.Append(Record(kRecordHeaderFeature, 0, feature.data));
  pipe.Append(SomeRecords());
  PerfDataTokenizer t(pipe.data, "p.data");
  std::vector<PerfToken> tokens;
  std::string error;
  Walk(t, tokens, error);
  CHECK(error.empty());
  CHECK(t.pipe_mode());
  REQUIRE(tokens.size() == 5);
  const auto& attr_record = std::get<RecordToken>(tokens[0]);
  auto attr = ParseHeaderAttrRecord(attr_record.body, attr_record.offset);
  REQUIRE(attr);
  CHECK(attr->ids == std::vector<uint64_t>{5});
  const auto& feature_record = std::get<RecordToken>(tokens[1]);
  auto f = ParseHeaderFeatureRecord(feature_record.body, feature_record.offset);
  REQUIRE(f);
  CHECK(f->id == kFeatHostname);
}

TEST_CASE("broken framing stops with an error naming the file and offset") {
  auto file = FileMode({Attr(1, 9, kSampleTime, true), {5}, SomeRecords(), {}});
  const size_t data_offset = 104 + 8 + 128;
  auto expect_error = [](const std::vector<uint8_t>& bytes, const std::string& needle) {
    PerfDataTokenizer t(bytes, "bad.data");
    std::vector<PerfToken> tokens;
    std::string error;
    Walk(t, tokens, error);
    INFO(error);
    CHECK(error.find("bad.data: offset 0x") == 0);
    CHECK(error.find(needle) != std::string::npos);
    CHECK(t.state() == State::kDone);
  };
  SECTION("cut in the middle of a record") {
    auto cut = file;
    cut.resize(data_offset + 12);
    expect_error(cut, "runs past the end of the file");
  }
  SECTION("cut inside an AUXTRACE payload") {
    auto cut = file;
    cut.resize(data_offset + 16 + 48 + 5);
    expect_error(cut, "AUXTRACE buffer of 16 bytes runs past the end");
  }
  SECTION("a record with an absurd size") {
    auto bad = file;
    bad[data_offset + 6] = 0xff;
    bad[data_offset + 7] = 0xff;
    expect_error(bad, "runs past the end of the data section");
  }
  SECTION("a record of size 0") {
    auto bad = file;
    bad[data_offset + 6] = 0;
    bad[data_offset + 7] = 0;
    expect_error(bad, "smaller than a record header");
  }
  SECTION("an AUXTRACE size pointing far past the end") {
    auto bad = file;
    bad[data_offset + 16 + 15] = 0x7f;  // top byte of the payload size
    expect_error(bad, "AUXTRACE buffer");
  }
  SECTION("a pipe without its header") {
    expect_error(SomeRecords(), "not a perf.data file");
  }
  SECTION("a header cut short") {
    expect_error(std::vector<uint8_t>(file.begin(), file.begin() + 50), "header is cut");
  }
  SECTION("an attr section outside the file") {
    auto bad = file;
    bad[24 + 5] = 1;
    expect_error(bad, "attr section");
  }
  SECTION("a feature table past the end") {
    auto bad = file;
    bad[72] = 1u << kFeatHostname;  // claim a hostname section
    expect_error(bad, "feature table entry for hostname");
  }
}
