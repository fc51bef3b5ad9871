#pragma once
// decode of a perf.data holding cs_etm AUX trace (Arm CoreSight ETMv4/ETE recorded by perf or
// simpleperf): per-CPU trace unit configuration from AUXTRACE_INFO, code from the executable
// mmaps' binaries (--symfs, build-id cache, path), formatted or unformatted trace per AUX stream.
#include <optional>
#include <string>
#include <vector>

namespace ptprof::cli {

struct PerfEtmCommandOptions {
  std::string path;
  std::string format = "text";       // text | jsonl
  std::vector<std::string> streams;  // --stream: AUX stream names (cpu7, ...); empty: all
  bool insn = false;
  std::string symfs;
  std::string buildid_dir;
};

// The exit status of decoding `options.path`, or nullopt when it is not a cs_etm perf.data (the
// caller then opens it as usual).
std::optional<int> RunPerfEtmDecode(const PerfEtmCommandOptions& options);

}  // namespace ptprof::cli
