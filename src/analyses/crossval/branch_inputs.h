#pragma once
// BranchInput answers "which branch records does this file hold, and what code and which files
// are behind their addresses?" for the two sources of recorded branch records: a perf.data whose
// samples carry hardware branch stacks (LBR) and a .ptar of the software branch tracer
// (`ptprof record --backend swbt`). Each comes with its own code images (for symbols and for
// decoding the code between records) and its own address normaliser.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "decoders/lbr/branch_record.h"
#include "decoders/lbr/perf_branch_stack.h"
#include "sideband/image_set.h"
#include "src/analyses/crossval/address_normaliser.h"
#include "src/model/result.h"
#include "src/pipeline/session.h"

namespace ptprof {

struct BranchInput {
  std::string path;
  std::string kind;                    // "lbr" or "swbt"
  std::vector<BranchSample> samples;   // branches oldest first
  ImageSet images;                     // code and symbols at the recorded addresses
  AddressNormaliser normaliser;
  std::vector<std::string> warnings;   // binaries not found, ...
  std::shared_ptr<ExtractedFiles> extracted;  // keeps extracted images alive
};

struct BranchInputOptions {
  std::string symfs;        // perf.data: where the recorded binaries are
  std::string buildid_dir;
};

// nullopt when `path` holds no branch records but is a trace the caller decodes itself (a
// perf.data with AUX trace and no branch stacks, any other .ptar, a raw trace). A perf.data with
// neither branch stacks nor AUX trace is an error ("no branch stacks"); so is a damaged file.
Result<std::optional<BranchInput>> OpenBranchInput(const std::string& path,
                                                   const BranchInputOptions& options);

}  // namespace ptprof
