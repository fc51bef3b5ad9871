// ptprof decode --format ptxed: libipt ptxed's options and output (see decoders/pt/ptxed_run.h).
#include <cstdio>

#include "decoders/pt/ptxed_run.h"
#include "src/cli/command.h"

namespace ptprof::cli {

int RunPtxedCompat(const std::vector<std::string>& args) {
  return pt::RunPtxed(args, stdout, stderr, PTPROF_VERSION);
}

}  // namespace ptprof::cli
