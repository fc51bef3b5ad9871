#include "src/cli/etm_perf_data.h"

#include <cstdio>

#include <catch2/catch.hpp>

#include "decoders/etm/perf_etm_config.h"
#include "src/cli/command.h"

using namespace ptprof;
using namespace ptprof::cli;

// main.cc's, which this test does not link: the message on stderr, exit status 1.
int ptprof::cli::ReportBadInput(const std::string& message) {
  std::fprintf(stderr, "ptprof: %s\n", message.c_str());
  return kExitBadInput;
}

namespace {

// A cs_etm input of one CPU-7 stream whose AUX buffers are the given (aux offset, size) pieces,
// their payload bytes laid out one after another in the file.
PerfEtmInput InputWithBuffers(const std::vector<std::pair<uint64_t, uint64_t>>& pieces) {
  PerfEtmInput input;
  auto cfg = etm::SourceConfigFromPerf("ETMv4", 7, {{"TRCCONFIGR", 0x40}, {"TRCTRACEIDR", 0x1e},
                                                    {"TRCIDR0", 0x28000ea1}, {"TRCIDR1", 0x4100f423},
                                                    {"TRCIDR2", 0x20001088}, {"TRCAUTHSTATUS", 0x8c}});
  REQUIRE(cfg);
  input.configs.push_back(*cfg);
  perf::AuxStream stream;
  stream.name = "cpu7";
  stream.cpu = 7;
  std::vector<uint8_t> bytes;
  for (const auto& [aux_offset, size] : pieces) {
    perf::AuxBuffer b;
    b.data_offset = bytes.size();
    b.size = size;
    b.aux_offset = aux_offset;
    for (uint64_t i = 0; i < size; ++i) bytes.push_back(static_cast<uint8_t>(b.data_offset + i));
    stream.buffers.push_back(b);
    stream.bytes += size;
  }
  input.data.bytes = SharedBytes(std::move(bytes));
  input.data.aux_streams.push_back(stream);
  input.streams.push_back(&input.data.aux_streams.back());
  return input;
}

struct Seen {
  std::vector<uint8_t> bytes;
  uint64_t offset;
  std::string missing;
};

std::vector<Seen> Runs(const PerfEtmInput& input, int* status) {
  std::vector<Seen> seen;
  *status = ForEachPerfEtmRun(input, *input.streams[0], "test.data",
                              [&](etm::EtmDecoder&, const std::vector<uint8_t>& bytes, uint64_t offset,
                                  const std::string& missing) { seen.push_back({bytes, offset, missing}); });
  return seen;
}

}  // namespace

TEST_CASE("contiguous AUX buffers are one run; a hole starts another that says what is missing") {
  PerfEtmInput input = InputWithBuffers({{0, 4}, {4, 2}, {100, 3}});
  int status = -1;
  std::vector<Seen> runs = Runs(input, &status);
  CHECK(status == kExitOk);
  REQUIRE(runs.size() == 2);
  CHECK(runs[0].bytes == std::vector<uint8_t>{0, 1, 2, 3, 4, 5});
  CHECK(runs[0].offset == 0);
  CHECK(runs[0].missing.empty());
  CHECK(runs[1].bytes == std::vector<uint8_t>{6, 7, 8});
  CHECK(runs[1].offset == 6);
  CHECK(runs[1].missing == "AUX data missing between AUX offsets 6 and 100");
}

TEST_CASE("unformatted trace of a CPU without configuration is skipped, not an error") {
  PerfEtmInput input = InputWithBuffers({{0, 4}});
  input.unformatted = true;
  input.data.aux_streams[0].cpu = 3;  // the configuration is cpu 7's
  int status = -1;
  CHECK(Runs(input, &status).empty());
  CHECK(status == kExitOk);
}

TEST_CASE("a file that is not a cs_etm perf.data is not taken") {
  PerfEtmCommandOptions options;
  options.path = "/nonexistent/perf.data";
  CHECK(!OpenPerfEtmInput(options, false));
}
