#pragma once
// `ptprof info` for perf.data inputs (file and pipe mode).
#include <string>

#include "src/archive/manifest.h"

namespace ptprof::cli {

struct PerfDataInfoOptions {
  std::string input;
  std::string format = "text";  // text or json
  std::string extract_aux_dir;  // when set: write each AUX stream to <dir>/<stream>.bin
  // The manifest of the .ptar the perf.data was restored from (its triggers, parameters).
  const archive::Manifest* manifest = nullptr;
};

// Prints what the perf.data holds; returns the exit status (1 with one line on bad input).
// `label`: the input as shown (the .ptar it was restored from); empty: options.input.
int RunPerfDataInfo(const PerfDataInfoOptions& options, const std::string& label = "");

}  // namespace ptprof::cli
