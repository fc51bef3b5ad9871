#pragma once
// `ptprof decode --branches`: the branch records of any input, as text (`from -> to  sym+off ->
// sym+off`) or JSON Lines ({"from":"0x...","to":"0x...","sample":N} plus cycles/mispred where the
// source records them): LBR samples of a perf.data with branch stacks, the bursts of a software
// branch tracer .ptar, or the taken branches of a decoded PT flow grouped into pseudo-samples of
// --lbr-depth records per thread (0: one sample per unbroken run).
#include <cstdint>
#include <string>

#include "src/pipeline/session.h"

namespace ptprof::cli {

struct DecodeBranchesOptions {
  std::string input;
  RawInputOptions raw;        // raw PT companions (and symfs/buildid_dir for perf.data)
  bool options_given = false;
  std::vector<std::string> streams;
  std::string format = "text";
  uint32_t lbr_depth = 16;
  bool verbose = false;  // say how each PT stream was decoded (segments, parts, or why not)
};

int RunDecodeBranches(const DecodeBranchesOptions& options);

}  // namespace ptprof::cli
