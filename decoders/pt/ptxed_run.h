#pragma once
// RunPtxed is `ptprof decode --format ptxed`: libipt 2.0.5's ptxed behaviour and output (see
// PtxedOptions for the options and PtxedPrinter for the text) on top of ptprof's image loading and
// flow decoder. Returns the process exit status: 0 success, 1 bad input, 2 usage error.
#include <cstdio>
#include <string>
#include <vector>

namespace ptprof::pt {

int RunPtxed(const std::vector<std::string>& args, std::FILE* out, std::FILE* err,
             const std::string& version);

}  // namespace ptprof::pt
