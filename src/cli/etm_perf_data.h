#pragma once
// decode of a perf.data holding cs_etm AUX trace (Arm CoreSight ETMv4/ETE recorded by perf or
// simpleperf): per-CPU trace unit configuration from AUXTRACE_INFO, code from the executable
// mmaps' binaries (--symfs, build-id cache, path), formatted or unformatted trace per AUX stream.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "decoders/etm/etm_decoder.h"
#include "decoders/etm/source_config.h"
#include "src/model/result.h"
#include "sideband/image_spec.h"
#include "sideband/perf/perf_data.h"

namespace ptprof::cli {

struct PerfEtmCommandOptions {
  std::string path;
  std::string format = "text";       // text | jsonl
  std::vector<std::string> streams;  // --stream: AUX stream names (cpu7, ...); empty: all
  bool insn = false;
  std::string symfs;
  std::string buildid_dir;
  bool verbose = false;  // decode: say how each buffer was decoded (segments)
};

// The exit status of decoding `options.path`, or nullopt when it is not a cs_etm perf.data (the
// caller then opens it as usual).
std::optional<int> RunPerfEtmDecode(const PerfEtmCommandOptions& options);

// `ptprof dump` of a cs_etm perf.data: the packets of each selected AUX stream, one stream after
// another (a "# stream" line before each in text, a "stream" field in JSON Lines). nullopt when
// `options.path` is not a cs_etm perf.data.
std::optional<int> RunPerfEtmDump(const PerfEtmCommandOptions& options);

// What dump, decode and delta share: the parsed file, each CPU's trace unit configuration, the
// selected AUX streams and the code of the mappings whose binaries were found.
struct PerfEtmInput {
  perf::PerfData data;
  std::vector<etm::SourceConfig> configs;
  std::vector<const perf::AuxStream*> streams;  // point into `data`
  std::vector<etm::MemoryImage> memory;
  std::vector<RawImageSpec> code_files;  // the same code as file ranges (for an ImageSet)
  bool unformatted = false;              // PERF_AUX_FLAG_CORESIGHT_FORMAT_RAW
};

// nullopt: not a cs_etm perf.data. Otherwise the input, or the exit status of an error already
// reported on stderr. `load_code`: read the binaries (--symfs, build-id cache, path).
std::optional<tl::expected<std::unique_ptr<PerfEtmInput>, int>> OpenPerfEtmInput(
    const PerfEtmCommandOptions& options, bool load_code);

// Calls `run` for each run of contiguous AUX buffers of `stream` with a fresh decoder for it (code
// loaded), the run's bytes, its offset in the stream's concatenated data and, when AUX data is
// missing before it, what is missing (empty otherwise). `packets_only`: decoders that list packets
// (dump) rather than decode. Returns an exit status, kExitOk when every run could be handed over.
using PerfEtmRun = std::function<void(etm::EtmDecoder& decoder, const std::vector<uint8_t>& bytes,
                                      uint64_t offset, const std::string& missing_before)>;
int ForEachPerfEtmRun(const PerfEtmInput& input, const perf::AuxStream& stream,
                      const std::string& where, const PerfEtmRun& run, bool packets_only = false);

}  // namespace ptprof::cli
