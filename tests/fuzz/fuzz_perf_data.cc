// Fuzz target: the perf.data reader. Any byte string goes through the tokenizer and the summary
// builder (file and pipe mode, every record and feature decoder), every AUX stream is
// concatenated, and the same bytes are read as a bare pevent record buffer: no crash, no hang,
// no unbounded allocation, whatever the input.
#include <cstdint>
#include <span>
#include <vector>

#include "sideband/perf/perf_abi.h"
#include "sideband/perf/perf_data.h"
#include "sideband/perf/perf_record.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ptprof::perf;
  std::vector<uint8_t> bytes(data, data + size);
  // Inputs without a perf.data magic are given one (alternating file and pipe headers is left to
  // the corpus), so that the fuzzer spends its time past the header.
  if (size < 8 || bytes[0] != 'P') {
    std::vector<uint8_t> header = {'P', 'E', 'R', 'F', 'I', 'L', 'E', '2', 16, 0, 0, 0, 0, 0, 0, 0};
    bytes.insert(bytes.begin(), header.begin(), header.end());
  }
  PerfDataOptions options;
  options.keep_samples = size > 0 && (data[0] & 1);
  auto parsed = ParsePerfData(std::move(bytes), "fuzz.data", options);
  if (parsed) {
    size_t total = 0;
    for (const auto& stream : parsed->aux_streams) total += parsed->StreamBytes(stream).size();
    (void)parsed->clock();
    (void)parsed->AuxAttr();
    (void)total;
  }
  // The same bytes as libipt pevent sideband, with a sample layout taken from the first bytes.
  PerfEventAttr attr;
  if (size >= 4) {
    attr.sample_type = data[size - 1] | (uint64_t{data[size - 2]} << 8) | (uint64_t{data[size - 3]} & 1) << 16;
    attr.flags = (data[size - 4] & 1) ? (1u << 18) : 0;
  }
  (void)ParsePerfEventBuffer(std::span<const uint8_t>(data, size), attr, "fuzz.sb");
  return 0;
}
